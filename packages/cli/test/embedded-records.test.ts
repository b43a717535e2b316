import { createEmbedded } from '@onceflow/embedded';
import { createDbFile } from './helpers.js';
import { describeRecordCommands } from './record-commands.js';

const db = await createDbFile();
const embedded = createEmbedded({ path: db });
await embedded.start();

describeRecordCommands({
  store: 'embedded',
  flags: ['--db', db],
  db,
  env: {},
  records: embedded.records,
  cleanup: () => embedded.close(),
});
