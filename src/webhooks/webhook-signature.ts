import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` + base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret (`whsec_` + base64 of 32 random bytes), shown to the client once. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The HMAC key of a `whsec_` secret (the bytes its base64 part encodes). */
export function signingKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a whsec_ secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The `webhook-signature` header of one send (Standard Webhooks): `v1,<base64 HMAC-SHA256(key, id.timestamp.body)>`
 * for each secret, space-separated — the current one first, then a rotated-out one still in its grace period,
 * so a receiver verifying with either secret accepts the message.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  const content = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(content).digest('base64')}`)
    .join(' ');
}

/** The headers of one send: id (stable across retries), the send's timestamp (seconds), the signatures. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  nowSeconds: number,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': signatureHeader(secrets, id, nowSeconds, body),
  };
}
