import { describeTransportConformance } from '@onceflow/conformance';
import { createFakeQClient } from '../src/fake-client.js';
import { createQTransport } from '../src/transport.js';

// One broker for the run: a second transport on a scenario's queue (a restart) sees its messages.
const client = createFakeQClient();

describeTransportConformance('q-example', {
  createTransport: async ({ queue, lockMs }) => createQTransport({ client, queue, lockMs }),
  cleanup: ({ queue }) => client.deleteQueue(queue),
  recordTo: false, // an example, not a row of this repository's capability matrix
});
