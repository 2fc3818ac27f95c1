/**
 * Inbound provider webhooks (CONTRACT.md): POST /api/v1/webhooks/{provider} for each provider of
 * INBOUND_WEBHOOK_SECRETS, verified on the raw bytes with a constant-time comparison.
 * - generic: `x-webhook-signature` = lowercase hex HMAC-SHA256 of the body (as our own deliveries);
 * - stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC of "t.body">[,v1=...]`, 5-minute tolerance.
 * An accepted event is stored once per provider event id (a provider's retry is acknowledged and
 * not stored twice), so that a handler can act on it.
 */
import { createHash, createHmac } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../json-depth.js';
import { hexSignature, safeEqual } from './signing.js';
import { storeInboundEvent } from './store.js';

export const STRIPE_TOLERANCE_SECONDS = 300;
export const INBOUND_PROVIDERS = ['generic', 'stripe'] as const;

function signatureError(message: string): BadRequestError {
  return new BadRequestError(message, undefined, 'INVALID_SIGNATURE');
}

export function verifyGeneric(secret: string, body: Buffer, header: string | undefined): void {
  if (!header) throw signatureError('Missing x-webhook-signature header');
  if (!safeEqual(header.trim().toLowerCase(), hexSignature(secret, body))) throw signatureError('Webhook signature does not match');
}

export function verifyStripe(secret: string, body: Buffer, header: string | undefined, nowSeconds = Math.floor(Date.now() / 1000)): void {
  if (!header) throw signatureError('Missing Stripe-Signature header');
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2).map((s) => s.trim());
    if (key === 't' && /^\d+$/.test(value ?? '')) timestamp = Number(value);
    else if (key === 'v1' && value) signatures.push(value.toLowerCase());
  }
  if (timestamp === undefined || signatures.length === 0) throw signatureError('Stripe-Signature must carry t= and v1=');
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(body).digest('hex');
  // Every candidate is compared (no early exit on a match).
  const matched = signatures.map((s) => safeEqual(s, expected)).includes(true);
  if (!matched) throw signatureError('Stripe signature does not match');
  if (Math.abs(nowSeconds - timestamp) > STRIPE_TOLERANCE_SECONDS) throw signatureError('Stripe signature timestamp is outside the 5-minute tolerance');
}

function parsedBody(body: Buffer): Record<string, unknown> | undefined {
  const text = body.toString('utf8');
  // Too deep to store or walk safely: kept as raw bytes only, like any body that is not an object.
  if (jsonDepth(text) > MAX_JSON_DEPTH) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Verifies and stores an inbound event; throws 404 for an unconfigured provider and 400 for a bad signature. */
export async function receiveInbound(
  provider: string,
  secrets: Record<string, string>,
  body: Buffer | undefined,
  headers: Record<string, string>,
): Promise<{ received: true }> {
  const secret = Object.hasOwn(secrets, provider) && (INBOUND_PROVIDERS as readonly string[]).includes(provider) ? secrets[provider] : undefined;
  if (typeof secret !== 'string' || !secret) throw new NotFoundError(`No inbound webhook receiver for provider '${provider}'`);
  const raw = body ?? Buffer.alloc(0);
  if (provider === 'stripe') verifyStripe(secret, raw, headers['stripe-signature']);
  else verifyGeneric(secret, raw, headers['x-webhook-signature']);
  const parsed = parsedBody(raw);
  if (!parsed) throw new BadRequestError(`The webhook body must be a JSON object nested at most ${MAX_JSON_DEPTH} levels deep`);
  const declaredId = provider === 'generic' ? (headers['webhook-id'] ?? parsed.id) : parsed.id;
  const eventId = typeof declaredId === 'string' && declaredId && declaredId.length <= 255 ? declaredId : `sha256:${createHash('sha256').update(raw).digest('hex')}`;
  await storeInboundEvent(provider, eventId, typeof parsed.type === 'string' ? parsed.type.slice(0, 255) : undefined, raw.toString('utf8'));
  return { received: true };
}
