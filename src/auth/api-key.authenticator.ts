import { Injectable, Logger } from '@nestjs/common';
import { AuthConfig } from '../config/auth.config';
import { hashApiKey } from './api-key';
import { ApiClientsService, type VerifyResult } from './api-clients.service';
import type { ClientContext } from './client-context';

const CACHE_MAX_ENTRIES = 10_000;
const LAST_USED_EVERY_MS = 60_000;

/**
 * Verifies presented keys for the guard. Successful verifications are cached for
 * API_KEY_CACHE_TTL_MS (<= 5 s: the documented revocation delay across processes; a revocation
 * through this process's admin API takes effect at once). Failures are never cached, so a cache
 * cannot be filled by guessing; the format and checksum reject junk before any database work.
 *
 * Refresh ahead: a hit in the second half of an entry's life is answered from the cache and re-verifies the key
 * in the background (once per entry at a time), so a key in steady use never waits for its row on the request
 * path (a miss every TTL was a p99 outlier of every API, ~14 ms under load: docs/BENCHMARKS.md session 15). The
 * revocation delay is unchanged: an entry is never served past its `until`, and a refresh that finds the key
 * revoked drops it at once.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly logger = new Logger('ApiKeyAuthenticator');
  private readonly cache = new Map<string, { client: ClientContext; until: number }>();
  private readonly lastTouched = new Map<string, number>();
  /** Cache keys with a refresh-ahead verification in flight. */
  private readonly refreshing = new Set<string>();
  /** Bumped by invalidate(): a refresh that began before a revocation through this process caches nothing. */
  private invalidations = 0;
  /** Per connection: its last presented key and that key's cache key (collected with the socket). */
  private readonly byConnection = new WeakMap<object, { presented: string; cacheKey: string }>();

  constructor(
    private readonly clients: ApiClientsService,
    private readonly config: AuthConfig,
  ) {}

  /**
   * `connection` (the request's socket) lets a keep-alive connection that presents the same key again
   * skip the cache key's HMAC (~3 % of a cached read answer): the connection remembers its last key and
   * that key's cache key. Only the same connection's own earlier key is ever compared, so nothing about
   * another client's key can be learnt from it; the memo goes with the connection.
   */
  async authenticate(presented: string, connection?: object): Promise<VerifyResult> {
    const ttl = this.config.API_KEY_CACHE_TTL_MS;
    const cacheKey = ttl > 0 ? this.cacheKeyOf(presented, connection) : '';
    const cached = ttl > 0 ? this.cache.get(cacheKey) : undefined;
    const now = Date.now();
    if (cached && cached.until > now) {
      if (cached.until - now < ttl / 2) this.refreshAhead(cacheKey, presented);
      this.touch(cached.client.id, now);
      return { ok: true, client: cached.client };
    }
    const result = await this.clients.verify(presented);
    if (result.ok) {
      if (ttl > 0) this.remember(cacheKey, result.client, now + ttl);
      this.touch(result.client.id, now);
    } else if (cached) {
      this.cache.delete(cacheKey);
    }
    return result;
  }

  /** Re-verifies a cached key off the request path; the entry is renewed, or dropped when the key no longer verifies. */
  private refreshAhead(cacheKey: string, presented: string): void {
    if (this.refreshing.has(cacheKey)) return;
    this.refreshing.add(cacheKey);
    // A revocation through this process while the read is out wins: its result is not cached.
    const generation = this.invalidations;
    this.clients
      .verify(presented)
      .then(
        (result) => {
          if (generation !== this.invalidations) return;
          if (result.ok)
            this.remember(cacheKey, result.client, Date.now() + this.config.API_KEY_CACHE_TTL_MS);
          else this.cache.delete(cacheKey);
        },
        (error: unknown) => {
          // The entry stays until its own expiry; the request that finds it expired verifies on its path.
          this.logger.warn({ err: error }, 'could not re-verify a cached API key ahead of its expiry');
        },
      )
      .finally(() => this.refreshing.delete(cacheKey));
  }

  private cacheKeyOf(presented: string, connection: object | undefined): string {
    const memo = connection ? this.byConnection.get(connection) : undefined;
    if (memo?.presented === presented) return memo.cacheKey;
    const cacheKey = hashApiKey(this.config.pepper, presented).toString('base64');
    if (connection) this.byConnection.set(connection, { presented, cacheKey });
    return cacheKey;
  }

  /** Forget a client at once (called on revocation through this process). */
  invalidate(clientId: string): void {
    this.invalidations++;
    for (const [key, entry] of this.cache) if (entry.client.id === clientId) this.cache.delete(key);
  }

  private remember(key: string, client: ClientContext, until: number): void {
    if (this.cache.size >= CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, { client, until });
  }

  /** `last_used_at` is informational: written at most once a minute per client, off the request path. */
  private touch(clientId: string, now: number): void {
    if ((this.lastTouched.get(clientId) ?? 0) + LAST_USED_EVERY_MS > now) return;
    this.lastTouched.set(clientId, now);
    if (this.lastTouched.size > CACHE_MAX_ENTRIES) this.lastTouched.clear();
    this.clients.touchLastUsed(clientId).catch((error: unknown) => {
      this.logger.warn({ err: error, clientId }, 'could not record last use of an API client');
    });
  }
}
