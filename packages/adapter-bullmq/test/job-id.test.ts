import { describe, expect, it } from 'vitest';
import { dedupeKeyOfJobId, jobIdOf } from '../src/index.js';

/** What BullMQ refuses as a custom job id (its own checks in `Job`/`Queue.add`). */
const refusedByBullmq = (id: string) =>
  `${Number.parseInt(id, 10)}` === id || (id.includes(':') && id.split(':').length !== 3);

const awkward = [
  'stripe:evt_1',
  'a:b:c',
  '::',
  ':',
  '%',
  '%%',
  '%3A',
  '%25',
  '%253A',
  '%:%',
  '%N',
  '%N42',
  '42',
  '-7',
  '0',
  '007',
  '1e3',
  ' 12',
  '12 ',
  '9007199254740993',
  'github:42',
  'ünïcødé:✓',
  '',
];

describe('jobIdOf', () => {
  it('escapes ":" and "%" so the default <source>:<id> key is a valid id', () => {
    expect(jobIdOf('stripe:evt_1')).toBe('stripe%3Aevt_1');
    expect(jobIdOf('a:b:c')).toBe('a%3Ab%3Ac');
    expect(jobIdOf('100%')).toBe('100%25');
    expect(jobIdOf('%3A')).toBe('%253A'); // a literal "%3A" is not a colon
    expect(jobIdOf('plain_key-1')).toBe('plain_key-1');
  });

  it('prefixes keys that read as integers with "%N", and only those', () => {
    expect(jobIdOf('42')).toBe('%N42');
    expect(jobIdOf('-7')).toBe('%N-7');
    expect(jobIdOf('0')).toBe('%N0');
    expect(jobIdOf('007')).toBe('007'); // parseInt gives 7: BullMQ accepts it
    expect(jobIdOf('1e3')).toBe('1e3');
    expect(jobIdOf('%N42')).toBe('%25N42'); // never the same id as the key "42"
  });

  it('never gives an id BullMQ refuses', () => {
    for (const key of awkward) expect(refusedByBullmq(jobIdOf(key)), key).toBe(false);
  });

  it('is injective: distinct keys, distinct ids', () => {
    const ids = new Set(awkward.map(jobIdOf));
    expect(ids.size).toBe(new Set(awkward).size);
  });
});

describe('dedupeKeyOfJobId', () => {
  it('round-trips every key', () => {
    for (const key of awkward) expect(dedupeKeyOfJobId(jobIdOf(key)), key).toBe(key);
  });

  it('round-trips random keys over an alphabet heavy in "%", ":", "3", "A", "2", "5", "N" and digits', () => {
    const alphabet = '%:%:3A25N0123456789-x';
    let seed = 1;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const seen = new Map<string, string>();
    const wrong: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const length = Math.floor(random() * 8);
      let key = '';
      for (let j = 0; j < length; j++) key += alphabet[Math.floor(random() * alphabet.length)];
      const id = jobIdOf(key);
      if (refusedByBullmq(id)) wrong.push(`${key} -> ${id}: refused by BullMQ`);
      if (dedupeKeyOfJobId(id) !== key) wrong.push(`${key} -> ${id}: decodes differently`);
      if ((seen.get(id) ?? key) !== key) wrong.push(`${key} -> ${id}: also ${seen.get(id)}`);
      seen.set(id, key);
    }
    expect(wrong).toEqual([]);
  });
});
