import { testEnvelope } from '@onceflow/conformance';
import { decodeEnvelope } from '@onceflow/core/kit';
import { describe, expect, it } from 'vitest';
import { attemptOf, deadLetterAttemptOf, encodeBody, sqsId, toOutgoing } from '../src/marshal.js';

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

  it('reads attempt from the receive count; a dead letter’s as the deliveries it had before', () => {
    const received = (count?: string) => ({ Attributes: { ApproximateReceiveCount: count } });
    expect(attemptOf(received('1'))).toBe(1);
    expect(attemptOf(received('7'))).toBe(7);
    expect(attemptOf(received(undefined))).toBe(1);
    expect(deadLetterAttemptOf(received('21'))).toBe(20);
    expect(deadLetterAttemptOf(received('1'))).toBe(1);
  });
});
