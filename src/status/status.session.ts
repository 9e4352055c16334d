import { createHmac, timingSafeEqual } from 'node:crypto';

/** The status page's login cookie: a signed session, never the key. */
export const STATUS_COOKIE = 'bff_status_session';

const b64 = (buffer: Buffer): string => buffer.toString('base64url');

function mac(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`status-session|${payload}`).digest();
}

/**
 * A session token for `clientId` until `expiresAtMs`: `<payload>.<hmac>`, the payload being the client id, the
 * expiry and the session's id (base64url JSON; the id names its `status_sessions` row, which a logout ends on every
 * replica), the HMAC-SHA256 keyed by a secret derived from the pepper. It says who logged in and until when; it
 * cannot be turned back into the key.
 */
export function signSession(
  secret: string,
  clientId: string,
  expiresAtMs: number,
  sessionId: string,
): string {
  const payload = b64(Buffer.from(JSON.stringify({ c: clientId, e: expiresAtMs, n: sessionId })));
  return `${payload}.${b64(mac(secret, payload))}`;
}

/** The client and session of a valid, unexpired token; null for anything else (malformed, tampered, expired). */
export function verifySession(
  secret: string,
  token: string,
  nowMs: number,
): { clientId: string; sessionId: string } | null {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length > 512) return null;
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  // Re-encoding must give the same text: base64url has no second spelling of a signed payload.
  if (b64(given) !== token.slice(dot + 1)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { c, e, n } = (parsed ?? {}) as { c?: unknown; e?: unknown; n?: unknown };
  if (typeof c !== 'string' || typeof e !== 'number' || typeof n !== 'string' || nowMs >= e) return null;
  return { clientId: c, sessionId: n };
}

/** The Set-Cookie value: HttpOnly, SameSite=Strict, only sent to /status…, Secure behind TLS (production). */
export function sessionCookie(token: string, ttlMs: number, secure: boolean): string {
  return (
    `${STATUS_COOKIE}=${token}; Path=/status; Max-Age=${Math.floor(ttlMs / 1000)}; HttpOnly; SameSite=Strict` +
    (secure ? '; Secure' : '')
  );
}

/** The session cookie's value in a Cookie header. */
export function cookieValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === STATUS_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}
