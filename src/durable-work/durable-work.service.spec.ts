import { describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import type { DurableWorkMetrics } from './durable-work.metrics';
import { DurableWorkService } from './durable-work.service';
import { WorkIdentity } from './work-identity';

function setup() {
  const claims: string[] = [];
  const sut = new DurableWorkService({} as DataSource, new WorkIdentity(), {} as DurableWorkMetrics);
  const loop = (name: string) =>
    sut.loop<number>({
      name,
      intervalMs: 60_000,
      concurrency: 1,
      claim: () => {
        claims.push(name);
        return Promise.resolve([]);
      },
      work: () => Promise.resolve(),
    });
  return { sut, claims, loop };
}

describe(DurableWorkService.name, () => {
  it('claims until stopClaiming() (the shutdown drain), then no loop claims, made before or after', async () => {
    const { sut, claims, loop } = setup();
    const before = loop('orders');
    expect(sut.claiming).toBe(true);
    await before.tick();
    sut.stopClaiming();
    const after = loop('webhook_deliveries');
    expect(sut.claiming).toBe(false);
    expect([before.claiming, after.claiming]).toEqual([false, false]);
    expect([await before.tick(), await after.tick()]).toEqual([0, 0]);
    expect(claims).toEqual(['orders']);
    await sut.onModuleDestroy();
  });
});
