import type { ClientContext } from './client-context';
import type { Scope } from './scopes';

/** Rate-limit bucket of a route: its required scope, or `default` for key-only routes. */
export type RateLimitBucket = Scope | 'default';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by AccessGuard; the request-line log hook writes id and name (never the key). */
    apiClient?: { id: string; name: string };
    /** Set by AccessGuard; read through `@CurrentClient()`. */
    clientContext?: ClientContext;
    /** Set by AccessGuard; ClientThrottlerGuard counts the request in this bucket. */
    rateLimitBucket?: RateLimitBucket;
  }
}

type HeaderValue = string | string[] | undefined;

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key']);

/**
 * Does the raw header list (name, value, name, value…) carry a credential header more than once?
 * Node keeps only the first `Authorization` in `headers`, so the parsed object cannot tell.
 */
export function repeatsCredentialHeader(rawHeaders: readonly string[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]?.toLowerCase() ?? '';
    if (!CREDENTIAL_HEADERS.has(name)) continue;
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/**
 * The key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`.
 * undefined: no credential at all; null: a credential that cannot be a key (other scheme, repeated
 * header — seen in `rawHeaders` when given —, two different keys). Both end in the same 401.
 */
export function presentedKey(
  headers: Record<string, HeaderValue>,
  rawHeaders: readonly string[] = [],
): string | undefined | null {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  if (authorization === undefined && apiKey === undefined) return undefined;
  if (Array.isArray(authorization) || Array.isArray(apiKey) || repeatsCredentialHeader(rawHeaders))
    return null;
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match) return null;
    bearer = match[1];
  }
  const fromHeader = apiKey?.trim();
  if (bearer !== undefined && fromHeader !== undefined && bearer !== fromHeader) return null;
  const key = bearer ?? fromHeader;
  return key ? key : null;
}
