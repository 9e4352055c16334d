import { UpstreamError } from './upstream.error';
import { EVENTS_PATH, type UpstreamCaller } from './upstream.call';
import type { UpstreamHttp } from './upstream.http';
import type { ResolvedUpstreamOptions } from './upstream.options';
import type { KeyVerdict, UpstreamCallOptions } from './upstream.types';

/** The key check of contract 5.7 and its readiness cache (UpstreamClient.verifyKey / verifyKeyCached). */
export class UpstreamKeyCheck {
  private verdict: KeyVerdict | undefined;
  private inFlight: Promise<KeyVerdict> | undefined;

  constructor(
    private readonly options: ResolvedUpstreamOptions,
    private readonly caller: UpstreamCaller,
    private readonly http: UpstreamHttp,
  ) {}

  /**
   * `GET /indexer/events/upcoming?limit=1` — a 200 shows the key works, even with empty items (contract 5.7).
   * Never throws for upstream answers: returns a verdict (401 = key or environment wrong, 403 = missing read
   * permission, else unreachable). One attempt per retry budget of a read, within the read timeout.
   */
  async verify(options: UpstreamCallOptions = {}): Promise<KeyVerdict> {
    const environment = this.options.environment;
    try {
      await this.caller.call(options, {
        operation: 'verifyKey',
        kind: 'read',
        method: 'GET',
        route: EVENTS_PATH,
        path: `${EVENTS_PATH}?limit=1`,
        parse: () => undefined,
        ignoreBody: true,
        maxAttempts: 2,
        deadlineMs: Math.min(this.options.timeouts.deadlineMs, this.options.timeouts.readMs * 2),
      });
      return { ok: true, environment, checkedAt: this.options.clock.now() };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      return {
        ok: false,
        environment,
        checkedAt: this.options.clock.now(),
        code: error.code,
        ...(error.status === undefined ? {} : { status: error.status }),
        reason: this.reason(error),
      };
    }
  }

  /**
   * verifyKey() reused for UPSTREAM_KEY_CHECK_TTL_MS (readiness probes every few seconds must not each hit
   * the upstream); a 401 seen on any call since the last check invalidates it at once.
   */
  async cached(): Promise<KeyVerdict> {
    const now = this.options.clock.now();
    const cached = this.verdict;
    // A verdict that already says 401 is not made stale by the 401 it was built from (same millisecond).
    const unauthorizedSince =
      cached !== undefined &&
      !(!cached.ok && cached.code === 'UNAUTHORIZED') &&
      (this.http.lastUnauthorizedAt ?? -Infinity) >= cached.checkedAt;
    if (cached !== undefined && !unauthorizedSince && now - cached.checkedAt < this.options.keyCheckTtlMs)
      return cached;
    this.inFlight ??= this.verify().finally(() => {
      this.inFlight = undefined;
    });
    this.verdict = await this.inFlight;
    return this.verdict;
  }

  private reason(error: UpstreamError): string {
    const env = this.options.environment;
    switch (error.code) {
      case 'UNAUTHORIZED':
        return `the upstream rejected UPSTREAM_API_KEY (401): wrong, incomplete or from another environment than ${env}`;
      case 'FORBIDDEN':
        return 'the key works but lacks the read permission (403)';
      case 'TIMEOUT':
        return 'the upstream did not answer in time';
      case 'UNAVAILABLE':
        return `the upstream is unreachable or failing (${error.status ?? 'no HTTP answer'})`;
      case 'RATE_LIMITED':
        return 'the upstream is rate limiting this key (429)';
      case 'REJECTED':
      case 'NOT_FOUND':
      case 'CONFLICT':
      case 'BAD_RESPONSE':
        return `unexpected upstream answer (${error.code}${error.status === undefined ? '' : ` ${error.status}`}): check UPSTREAM_BASE_URL`;
    }
    return 'unexpected upstream answer';
  }
}
