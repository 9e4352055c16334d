import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { isDatabaseBusy } from '../database/pool-gate';

/**
 * What a failed database check says in the readiness body. The probe is public and the driver's text names
 * the server's address (or quotes SQL): the body says which kind of failure it was, never the text.
 */
export function databaseFailure(error: unknown): Error {
  return new Error(isDatabaseBusy(error) ? 'database unreachable or busy' : 'database query failed');
}

/** Ready only when a `SELECT 1` on a pooled connection answers (replaces Terminus's, which echoes driver text). */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly health: HealthIndicatorService,
  ) {}

  pingCheck(key: string, timeoutMs: number) {
    return this.health
      .check(key)
      .attempt(async () => {
        await this.dataSource.query('SELECT 1').catch((error: unknown) => {
          throw databaseFailure(error);
        });
      })
      .withTimeout(timeoutMs);
  }
}
