import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';
import { UpstreamClient } from './upstream.client';

/**
 * Readiness of the upstream key (contract 5.7): the cached verifyKey() verdict. A rejected key (401) or a
 * key without read permission (403) makes the service not ready: an operator must fix UPSTREAM_API_KEY or
 * UPSTREAM_ENVIRONMENT. An unreachable upstream is reported but keeps the service ready unless
 * UPSTREAM_READY_REQUIRES_REACHABLE=true: browsing is served from the mirror, and pulling every replica out
 * of the load balancer during an upstream outage would turn a partial outage into a full one.
 */
@Injectable()
export class UpstreamHealthIndicator {
  constructor(
    private readonly client: UpstreamClient,
    private readonly health: HealthIndicatorService,
  ) {}

  async check(key: string, timeoutMs: number) {
    const indicator = this.health.check(key);
    const verdict = await raceTimeout(this.client.verifyKeyCached(), timeoutMs);
    const environment = this.client.environment;
    if (verdict === TIMED_OUT) {
      const details = { environment, key: 'unverified', reason: 'key check still running (upstream slow)' };
      return this.client.readinessRequiresReachable ? indicator.down(details) : indicator.up(details);
    }
    if (verdict.ok) return indicator.up({ environment, key: 'valid' });
    const details = { environment, key: 'unverified', code: verdict.code, reason: verdict.reason };
    if (verdict.code === 'UNAUTHORIZED' || verdict.code === 'FORBIDDEN') {
      return indicator.down({ ...details, key: 'rejected' });
    }
    return this.client.readinessRequiresReachable
      ? indicator.down(details)
      : indicator.up({ ...details, reachable: false });
  }
}
