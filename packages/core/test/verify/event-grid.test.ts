import { EventGridDeserializer, isSystemEvent } from '@azure/eventgrid';
import { describe, expect, it } from 'vitest';
import { BadRequestError, SignatureError } from '../../src/errors.js';
import { eventGrid } from '../../src/verify/index.js';
import { webhook } from './fixtures.js';

// Bodies in the Event Grid schema as Azure's own SDK reads them: each batch goes through the
// SDK's `EventGridDeserializer` first, and onceflow must find the same events in it.
const SECRET = 'eg-secret-1';
const URL_ = `https://hooks.example.test/webhooks/azure?code=${SECRET}`;
const sdk = new EventGridDeserializer();

const events = [
  {
    id: '831e1650-001e-001b-66ab-eeb76e069631',
    topic: '/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct',
    subject: '/blobServices/default/containers/c/blobs/a.txt',
    eventType: 'Microsoft.Storage.BlobCreated',
    eventTime: '2025-06-01T11:59:58.123Z',
    data: { api: 'PutBlob', contentLength: 524288 },
    dataVersion: '1',
    metadataVersion: '1',
  },
  {
    id: '931e1650-001e-001b-66ab-eeb76e069632',
    topic: '/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct',
    subject: '/blobServices/default/containers/c/blobs/b.txt',
    eventType: 'Microsoft.Storage.BlobDeleted',
    eventTime: '2025-06-01T11:59:59.000Z',
    data: { api: 'DeleteBlob' },
    dataVersion: '1',
    metadataVersion: '1',
  },
];
const validation = [
  {
    id: '2d1781af-3a4c-4d7c-bd0c-e34b19da4e66',
    topic: '/subscriptions/s1',
    subject: '',
    data: { validationCode: '512d38b6-c7b8-40c8-89fe-f46f9e9622b6', validationUrl: 'https://x' },
    eventType: 'Microsoft.EventGrid.SubscriptionValidationEvent',
    eventTime: '2025-06-01T11:59:58.123Z',
    metadataVersion: '1',
    dataVersion: '1',
  },
];

describe('event grid', () => {
  const { verifier } = eventGrid({ secrets: [SECRET] });
  const now = new Date();

  it('turns a batch into one event per element, as the SDK reads it', async () => {
    const body = JSON.stringify(events);
    const read = await sdk.deserializeEventGridEvents(body);
    const verified = verifier.verify(webhook({ url: URL_, body }), now);
    expect(verified.map(({ payload: _, ...e }) => e)).toEqual(
      read.map((e) => ({
        eventId: e.id,
        type: e.eventType,
        key: e.subject,
        occurredAt: new Date(e.eventTime).toISOString(),
      })),
    );
    expect(JSON.parse(new TextDecoder().decode(verified[1]?.payload))).toEqual(events[1]);
  });

  it('answers the subscription validation with its code, once the secret passed', async () => {
    const body = JSON.stringify(validation);
    const [read] = await sdk.deserializeEventGridEvents(body);
    expect(isSystemEvent('Microsoft.EventGrid.SubscriptionValidationEvent', read!)).toBe(true);
    expect(verifier.handshake?.(webhook({ url: URL_, body }), now)).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ validationResponse: '512d38b6-c7b8-40c8-89fe-f46f9e9622b6' }),
    });
    const forged = webhook({ url: 'https://hooks.example.test/webhooks/azure?code=x', body });
    expect(verifier.handshake?.(forged, now)).toBeUndefined();
    expect(() => verifier.verify(webhook({ url: URL_, body }), now)).toThrow(BadRequestError);
  });

  it('rejects a wrong or missing secret, accepts a bearer delivery header and rotation', () => {
    const body = JSON.stringify(events);
    const bare = 'https://hooks.example.test/webhooks/azure';
    expect(() => verifier.verify(webhook({ url: `${bare}?code=nope`, body }), now)).toThrow(
      SignatureError,
    );
    expect(() => verifier.verify(webhook({ url: bare, body }), now)).toThrow(SignatureError);
    const bearer = webhook({ url: bare, body, headers: { authorization: `Bearer ${SECRET}` } });
    expect(verifier.verify(bearer, now)).toHaveLength(2);
    const rotating = eventGrid({ secrets: ['eg-new', SECRET] }).verifier;
    expect(rotating.verify(webhook({ url: URL_, body }), now)).toHaveLength(2);
    expect(() => verifier.verify(webhook({ url: URL_, body: '{"id":1}' }), now)).toThrow(
      BadRequestError,
    );
  });

  it('reads the CloudEvents schema through the CloudEvents source, with its OPTIONS handshake', async () => {
    const ce = eventGrid({ secrets: [SECRET], schema: 'cloudevents' }).verifier;
    const body = JSON.stringify({
      specversion: '1.0',
      id: 'A234-1234-1234',
      source:
        '/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct',
      type: 'Microsoft.Storage.BlobCreated',
      subject: '/blobServices/default/containers/c/blobs/a.txt',
      time: '2025-06-01T11:59:58.123Z',
      datacontenttype: 'application/json',
      data: { api: 'PutBlob' },
    });
    const [read] = await sdk.deserializeCloudEvents(body);
    const request = webhook({
      url: URL_,
      body,
      headers: { 'content-type': 'application/cloudevents+json' },
    });
    const [event] = ce.verify(request, now);
    expect(event).toMatchObject({ type: read?.type, key: read?.subject });
    expect(event?.eventId).toContain(read!.id);
    expect(() => ce.verify({ ...request, url: new URL('https://h.test/x?code=no') }, now)).toThrow(
      SignatureError,
    );
    const options = webhook({
      method: 'OPTIONS',
      url: URL_,
      body: '',
      headers: { 'webhook-request-origin': 'eventgrid.azure.net' },
    });
    expect(ce.handshake?.(options, now)).toMatchObject({
      status: 200,
      headers: { 'webhook-allowed-origin': 'eventgrid.azure.net' },
    });
  });
});
