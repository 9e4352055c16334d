import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage } from '@nestjs/throttler';
import { AppError } from '../common/app-error';
import { AuthConfig } from '../config/auth.config';
import { ReplicasService } from '../replicas/replicas.service';
import type { SlidingWindowThrottlerStorage } from './sliding-window.storage';

/**
 * The failed-authentication budget (issue 31 item 4): RATE_LIMIT_AUTH_FAILURES failures per source address and
 * RATE_LIMIT_WINDOW_MS, on every keyed route (AccessGuard) and the status page's login and cookie
 * (StatusAccess). Counted in the rate limiter's own store (the one sliding-window storage), against this
 * replica's share of the budget (budget / live replicas), so it holds across replicas like the client budgets.
 * Keyed by the socket's address (trustProxy is off: behind a proxy that is the proxy's, docs/SECURITY.md).
 * Once over it, an address's requests that need a credential are refused before the credential is checked:
 * a guesser learns nothing more until the window frees.
 */
@Injectable()
export class FailedAuthLimiter {
  constructor(
    @InjectThrottlerStorage() private readonly storage: SlidingWindowThrottlerStorage,
    private readonly config: AuthConfig,
    private readonly replicas: ReplicasService,
  ) {}

  /** 429 RATE_LIMITED with Retry-After when `address` has spent its budget of failures. */
  assertAllowed(address: string): void {
    const retryAfter = this.storage.retryAfter(keyOf(address), this.limit());
    if (retryAfter > 0)
      throw new AppError(
        'RATE_LIMITED',
        `Too many failed authentications from this address: ${this.config.RATE_LIMIT_AUTH_FAILURES} per ` +
          `${Math.round(this.config.RATE_LIMIT_WINDOW_MS / 1000)} s`,
        undefined,
        retryAfter,
      );
  }

  /** Counts one failed authentication of `address`. */
  recordFailure(address: string): void {
    this.storage.hit(keyOf(address), this.config.RATE_LIMIT_WINDOW_MS, this.limit());
  }

  private limit(): number {
    return this.replicas.share(this.config.RATE_LIMIT_AUTH_FAILURES);
  }
}

const keyOf = (address: string): string => `auth-failures|${address}`;
