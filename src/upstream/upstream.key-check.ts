import { Inject, Injectable } from '@nestjs/common';
import { RetryLoop } from './http/retry-loop';
import type { UpstreamError } from './upstream.error';
import { UPSTREAM_OPTIONS } from './upstream.tokens';
import type { ResolvedUpstreamOptions } from './upstream.options';
import type { KeyVerdict } from './upstream.types';

/** The key check's readiness cache (UpstreamClient.verifyKeyCached); the check itself is the client's. */
@Injectable()
export class UpstreamKeyCheck {
  private verdict: KeyVerdict | undefined;
  private inFlight: Promise<KeyVerdict> | undefined;

  constructor(
    @Inject(UPSTREAM_OPTIONS) private readonly options: ResolvedUpstreamOptions,
    /** Its `lastUnauthorizedAt`: the time of the last 401 on any call. */
    private readonly loop: RetryLoop,
  ) {}

  /** A failed call as a verdict: never throws for upstream answers. */
  verdictFor(error: UpstreamError): KeyVerdict {
    return {
      ok: false,
      environment: this.options.environment,
      checkedAt: this.options.clock.now(),
      code: error.code,
      ...(error.status === undefined ? {} : { status: error.status }),
      reason: this.reason(error),
    };
  }

  /**
   * verifyKey() reused for UPSTREAM_KEY_CHECK_TTL_MS (readiness probes every few seconds must not each hit
   * the upstream); a 401 seen on any call since the last check invalidates it at once.
   */
  async cached(verify: () => Promise<KeyVerdict>): Promise<KeyVerdict> {
    const now = this.options.clock.now();
    const cached = this.verdict;
    // A verdict that already says 401 is not made stale by the 401 it was built from (same millisecond).
    const unauthorizedSince =
      cached !== undefined &&
      !(!cached.ok && cached.code === 'UNAUTHORIZED') &&
      (this.loop.lastUnauthorizedAt ?? -Infinity) >= cached.checkedAt;
    if (cached !== undefined && !unauthorizedSince && now - cached.checkedAt < this.options.keyCheckTtlMs)
      return cached;
    this.inFlight ??= verify().finally(() => {
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
