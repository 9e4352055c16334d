import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { migrationStatus } from '../database/migration-status';
import { databaseFailure } from './database.health';

/** Ready only when every migration the code knows is recorded as applied. */
@Injectable()
export class MigrationsHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly health: HealthIndicatorService,
  ) {}

  check(key: string, timeoutMs: number) {
    return this.health
      .check(key)
      .attempt(async () => {
        const { applied, pending } = await migrationStatus(this.dataSource).catch((error: unknown) => {
          throw databaseFailure(error);
        });
        if (pending.length > 0) throw new Error(`pending migrations: ${pending.join(', ')}`);
        return { applied };
      })
      .withTimeout(timeoutMs);
  }
}
