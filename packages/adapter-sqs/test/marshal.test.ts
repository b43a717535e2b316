import { testEnvelope } from '@onceflow/conformance';
import { decodeEnvelope } from '@onceflow/core/kit';
import { describe, expect, it } from 'vitest';
import { toDeadLetterEntry } from '../src/dead-letter-message.js';
import { encodeBody, sqsId, toOutgoing } from '../src/marshal.js';

const SQS_ID = /^[\x21-\x7e]{1,128}$/;

describe('wire mapping (no broker)', () => {
  it('always hashes the dedupe key and keeps the readable key as an attribute', () => {
    const envelope = testEnvelope({ key: 'cus 9 with spaces' });
    const long = `stripe:${'é'.repeat(300)}`;
    const out = toOutgoing({ envelope, dedupeKey: long }, 1_000_000);
    expect(out.dedupeId).toBe(sqsId(long));
    expect(out.dedupeId).toMatch(SQS_ID);
    expect(out.groupId).toMatch(SQS_ID);
    expect(out.groupId).toBe(sqsId('cus 9 with spaces'));
    expect(out.attributes['x-onceflow-dedupe-key']?.StringValue?.startsWith('stripe:é')).toBe(true);
    expect(toOutgoing({ envelope: testEnvelope({ key: 'cus_9' }) }, 1_000_000).groupId).toBe(
      'cus_9',
    );
  });

  it('writes U+FFFE and U+FFFF (refused by SQS) as JSON escapes, and the envelope round-trips', () => {
    const envelope = testEnvelope({ payload: { text: 'a\uffffb\ufffe' } });
    const body = encodeBody(envelope, 1_000_000);
    expect(body).not.toMatch(/[\ufffe\uffff]/);
    expect(decodeEnvelope(body)).toEqual(decodeEnvelope(JSON.stringify(JSON.parse(body))));
    expect(Buffer.from(decodeEnvelope(body).payload).toString()).toContain('a\uffffb\ufffe');
  });

  it('keeps a long dead-letter error parseable within its byte budget', () => {
    const entry = toDeadLetterEntry(
      { MessageId: 'm-1', Body: '{}', MessageAttributes: {} },
      {
        reason: 'r'.repeat(5000),
        attempts: 3,
        lastError: { code: 'INTERNAL', name: 'Error', message: '"\u0001'.repeat(5000) },
        deadLetteredAt: new Date().toISOString(),
      },
      true,
    );
    const error = entry.MessageAttributes['x-onceflow-dead-letter-error']?.StringValue ?? '';
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(2500);
    expect(JSON.parse(error)).toMatchObject({ code: 'INTERNAL', name: 'Error' });
    expect(entry.MessageAttributes['x-onceflow-dead-letter-reason']?.StringValue).toHaveLength(
      1024,
    );
    expect(entry.MessageDeduplicationId).toMatch(SQS_ID);
  });
});
