/**
 * Signatures of outbound deliveries and of inbound provider webhooks.
 *
 * Outbound, both on every delivery:
 * - `x-webhook-signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret's
 *   UTF-8 bytes (SPEC.md, Authentication 14);
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256
 *   of `<id>.<timestamp>.<body>`. A secret of the form `whsec_<base64>` is keyed with the decoded
 *   bytes, as the standardwebhooks libraries do; any other secret with its UTF-8 bytes (pass
 *   `whsec_` + base64 of it to those libraries).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hexSignature(secret: string, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

export function standardWebhookKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const decoded = Buffer.from(secret.slice('whsec_'.length), 'base64');
    if (decoded.length > 0) return decoded;
  }
  return Buffer.from(secret, 'utf8');
}

export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', standardWebhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery attempt. */
export function deliveryHeaders(secret: string, eventId: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'entity-record-api-webhooks/1',
    'x-webhook-signature': hexSignature(secret, body),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secret, eventId, timestamp, body),
  };
}

/** Constant-time comparison of two strings (false for different lengths, without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
