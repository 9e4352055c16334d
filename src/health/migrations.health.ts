import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

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
        const rows: { name: string }[] = await this.dataSource.query('SELECT name FROM migrations');
        const applied = new Set(rows.map((r) => r.name));
        const pending = this.dataSource.migrations
          .map((m) => m.name ?? m.constructor.name)
          .filter((n) => !applied.has(n));
        if (pending.length > 0) throw new Error(`pending migrations: ${pending.join(', ')}`);
        return { applied: applied.size };
      })
      .withTimeout(timeoutMs);
  }
}
