import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encryptSecret, decryptSecret } from '../../../shared/webhooks/secrets.js';
import { deliveryHeaders, hexSignature, standardSignature } from '../../../shared/webhooks/signing.js';
import { verifyGeneric, verifyStripe } from '../../../shared/webhooks/inbound.js';

describe('delivery signatures', () => {
  const body = '{"id":"evt_1","type":"task.created","createdAt":"2026-01-01T00:00:00.000Z","data":{}}';

  it('x-webhook-signature is the lowercase hex HMAC-SHA256 of the body', () => {
    expect(hexSignature('s3cret-value', body)).toBe(createHmac('sha256', 's3cret-value').update(body).digest('hex'));
  });

  it('webhook-signature follows Standard Webhooks (whsec_ secrets keyed with their decoded bytes)', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const secret = `whsec_${key.toString('base64')}`;
    const expected = createHmac('sha256', key).update(`evt_1.1700000000.${body}`).digest('base64');
    expect(standardSignature(secret, 'evt_1', 1700000000, body)).toBe(`v1,${expected}`);
  });

  it('every delivery carries the id, the timestamp and both signatures', () => {
    const headers = deliveryHeaders('plain-secret-1', 'evt_1', body, 1_700_000_000_500);
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': '1700000000' });
    expect(headers['webhook-signature']).toBe(standardSignature('plain-secret-1', 'evt_1', 1700000000, body));
    expect(headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('webhook secrets at rest', () => {
  it('round-trips and never stores the plain secret', async () => {
    const stored = await encryptSecret('my-webhook-secret', 'whk_1');
    expect(stored).not.toContain('my-webhook-secret');
    expect(await decryptSecret(stored, 'whk_1')).toBe('my-webhook-secret');
  });

  it('a ciphertext moved to another webhook does not decrypt', async () => {
    const stored = await encryptSecret('my-webhook-secret', 'whk_1');
    await expect(decryptSecret(stored, 'whk_2')).rejects.toThrow();
  });
});

describe('inbound verification', () => {
  const body = Buffer.from('{"id":"evt_9","type":"invoice.paid"}');
  const stripe = (secret: string, t: number, raw = body) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(raw).digest('hex')}`;

  it('generic: accepts the right signature, refuses others', () => {
    expect(() => verifyGeneric('gen-secret', body, hexSignature('gen-secret', body))).not.toThrow();
    expect(() => verifyGeneric('gen-secret', body, hexSignature('other', body))).toThrow(/does not match/);
    expect(() => verifyGeneric('gen-secret', body, undefined)).toThrow(/Missing/);
  });

  it('stripe: 5-minute tolerance either way, any of several v1 signatures', () => {
    const now = 1_700_000_000;
    expect(() => verifyStripe('whsec_x', body, stripe('whsec_x', now - 299), now)).not.toThrow();
    expect(() => verifyStripe('whsec_x', body, stripe('whsec_x', now - 301), now)).toThrow(/tolerance/);
    expect(() => verifyStripe('whsec_x', body, stripe('whsec_x', now + 301), now)).toThrow(/tolerance/);
    expect(() => verifyStripe('whsec_x', body, `${stripe('whsec_x', now, body)},v1=${'0'.repeat(64)}`, now)).not.toThrow();
    expect(() => verifyStripe('whsec_x', Buffer.from('{"id":"evt_9"}'), stripe('whsec_x', now), now)).toThrow(/does not match/);
    expect(() => verifyStripe('whsec_x', body, 'v1=abc', now)).toThrow(/t= and v1=/);
  });
});
