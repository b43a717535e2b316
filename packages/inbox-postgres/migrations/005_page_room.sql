-- onceflow PostgreSQL inbox, migration 005: room on each page for a record's next versions.
-- Placeholders as in 001. Changes only how pages are filled from now on: no rewrite, and the
-- table's lock is held for a moment.

-- A record is written again after its insert (markEnqueued, then begin and complete for each
-- attempt), and each write makes a new row version. On a page packed full there is no room for
-- it, so the version goes wherever the free-space map finds some: on a large table, old pages
-- all over it, each read in, dirtied and logged whole after every checkpoint. At 10M rows and
-- about 5,000 claims/s that was 2.7 full-page images per claim, 110 MB/s of WAL and a
-- checkpoint every 5 s. With a fifth of each page kept free, new rows go to pages with that
-- room and their next versions stay on the same page: WAL fell to about 2 MB/s in the same
-- bench, and begin and complete become heap-only updates (no index entries). Pages written
-- before this migration stay as full as they are until a purge and VACUUM free them.
ALTER TABLE {{table}} SET (fillfactor = 80);
