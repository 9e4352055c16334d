import type { HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../common/app-error';
import { AppConfig } from '../config/app.config';
import type { DatabaseHealthIndicator } from './database.health';
import { DrainState } from './drain.state';
import { HealthController } from './health.controller';
import type { MigrationsHealthIndicator } from './migrations.health';
import type { SyncHealthIndicator } from './sync.health';

function setup() {
  const check = vi.fn<(checks: unknown[]) => Promise<HealthCheckResult>>(async () => ({
    status: 'ok',
    info: {},
    error: {},
    details: {},
  }));
  const drain = new DrainState();
  const sut = new HealthController(
    { check } as unknown as HealthCheckService,
    {} as DatabaseHealthIndicator,
    {} as MigrationsHealthIndicator,
    new AppConfig(),
    {} as SyncHealthIndicator,
    drain,
  );
  return { sut, check, drain };
}

describe(HealthController.name, () => {
  it('runs the readiness checks while not draining', async () => {
    const { sut, check } = setup();
    await expect(sut.ready()).resolves.toMatchObject({ status: 'ok' });
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('fails readiness at once once draining, without running a check; liveness stays ok', async () => {
    const { sut, check, drain } = setup();
    drain.begin();
    const failure = await sut.ready().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'Not ready: shutting down',
      retryAfterSeconds: 1,
    });
    expect(check).not.toHaveBeenCalled();
    expect(sut.live()).toEqual({ status: 'ok' });
  });
});
