import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';

/**
 * Readiness of the catalog mirror: after the startup grace, a complete pass must exist for each resource;
 * staleness past SYNC_STALE_AFTER_MS is reported (`state: degraded`) but keeps the service ready.
 */
@Injectable()
export class SyncHealthIndicator {
  constructor(
    private readonly sync: CatalogSyncService,
    private readonly health: HealthIndicatorService,
  ) {}

  async check(key: string, timeoutMs: number) {
    const indicator = this.health.check(key);
    try {
      const readiness = await raceTimeout(this.sync.readiness(), timeoutMs);
      if (readiness === TIMED_OUT) return indicator.down({ reason: 'sync status query timed out' });
      return readiness.up ? indicator.up(readiness.details) : indicator.down(readiness.details);
    } catch {
      return indicator.down({ reason: 'sync status unavailable' });
    }
  }
}
