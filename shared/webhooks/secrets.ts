/**
 * Webhook secrets at rest: AES-256-GCM under the deployment's `webhook-secrets` key
 * (shared/deployment-secret.ts), bound to the webhook (additional data) so a ciphertext
 * copied onto another webhook does not decrypt. Never returned, never logged.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deploymentKey } from '../deployment-secret.js';

const VERSION = 'v1';

export async function encryptSecret(secret: string, boundTo: string): Promise<string> {
  const key = await deploymentKey('webhook-secrets');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
}

export async function decryptSecret(stored: string, boundTo: string): Promise<string> {
  const [version, iv, tag, ciphertext] = stored.split(':');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('unknown webhook secret format');
  const key = await deploymentKey('webhook-secrets');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
  decipher.setAAD(Buffer.from(boundTo, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
}
