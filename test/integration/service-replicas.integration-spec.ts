import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  REPLICA_RETENTION_MS,
  ServiceReplicaRepository,
} from '../../src/replicas/service-replica.repository';
import { openTestDataSource, type TestDataSource } from '../support/test-database';

/**
 * Ages come from the database clock, between a write and a later read: they cannot exceed the wall time the test
 * measured from before the write to after the read (plus a little for the two clocks' rounding). A fixed slack
 * would fail whenever a loaded machine is slower than it between the statements.
 */
const slackSince = (t0: number): number => Date.now() - t0 + 50;
/** A pause far longer than the test, so what is left of it still tells a kept pause from a shortened one. */
const PAUSE_MS = 60_000;

describe(ServiceReplicaRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let sut: ServiceReplicaRepository;
  let run = 0;
  const ids = () => {
    run++;
    return { a: `a-${run}`, b: `b-${run}` };
  };
  const rowOf = async (reader: string, id: string) =>
    (await sut.beat(reader, '0.0.0-test')).find((row) => row.instanceId === id);

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 2 });
    dataSource = db.dataSource;
    sut = new ServiceReplicaRepository(dataSource);
  });
  afterAll(() => db?.close());

  it("a beat creates the replica's row (started and seen now, its version) and reads every other row, never its own", async () => {
    const { a, b } = ids();
    let t0 = Date.now();
    expect((await sut.beat(a, '1.2.3')).some((row) => row.instanceId === a)).toBe(false);
    const seen = await rowOf(b, a);
    expect(seen).toMatchObject({
      stopped: false,
      throttleFactor: null,
      throttledMsAgo: null,
      pausedForMs: 0,
    });
    expect(Math.abs(seen!.seenMsAgo)).toBeLessThan(slackSince(t0));
    const [row] = await dataSource.query<{ version: string; same: boolean }[]>(
      `SELECT version, started_at = seen_at AS same FROM service_replicas WHERE instance_id = $1`,
      [a],
    );
    expect(row).toEqual({ version: '1.2.3', same: true });
    t0 = Date.now();
    await dataSource.query(
      `UPDATE service_replicas SET started_at = now() - interval '7 seconds', seen_at = now() - interval '7 seconds'
       WHERE instance_id = $1`,
      [a],
    );
    const aged = await rowOf(b, a);
    expect(aged!.seenMsAgo).toBeGreaterThanOrEqual(7_000);
    expect(aged!.seenMsAgo).toBeLessThan(7_000 + slackSince(t0));
    // The next beat refreshes seen_at and keeps started_at.
    t0 = Date.now();
    await sut.beat(a, '1.2.3');
    expect(Math.abs((await rowOf(b, a))!.seenMsAgo)).toBeLessThan(slackSince(t0));
    const [kept] = await dataSource.query<{ earlier: boolean }[]>(
      `SELECT started_at < seen_at - interval '6 seconds' AS earlier FROM service_replicas WHERE instance_id = $1`,
      [a],
    );
    expect(kept.earlier).toBe(true);
  });

  it('a stopped replica reads as stopped', async () => {
    const { a, b } = ids();
    await sut.beat(a, '1');
    await sut.markStopped(a);
    expect((await rowOf(b, a))!.stopped).toBe(true);
  });

  it('a published 429 carries its factor, its age and what is left of its pause; a shorter or no pause keeps it', async () => {
    const { a, b } = ids();
    await sut.beat(a, '1');
    const t0 = Date.now();
    await sut.publishThrottle(a, 0.5, PAUSE_MS);
    const first = (await rowOf(b, a))!;
    expect(first.throttleFactor).toBe(0.5);
    expect(first.throttledMsAgo).toBeGreaterThanOrEqual(0);
    expect(first.throttledMsAgo).toBeLessThan(slackSince(t0));
    expect(first.pausedForMs).toBeGreaterThan(PAUSE_MS - slackSince(t0));
    expect(first.pausedForMs).toBeLessThanOrEqual(PAUSE_MS);
    await sut.publishThrottle(a, 0.25, 100);
    await sut.publishThrottle(a, 0.125, undefined);
    const later = (await rowOf(b, a))!;
    expect(later.throttleFactor).toBe(0.125);
    // Still the first pause, less only the time since it was published: neither later publish shortened it.
    expect(later.pausedForMs).toBeGreaterThan(PAUSE_MS - slackSince(t0));
    await dataSource.query(
      `UPDATE service_replicas SET paused_until = now() - interval '1 second' WHERE instance_id = $1`,
      [a],
    );
    expect((await rowOf(b, a))!.pausedForMs).toBe(0);
  });

  it('a beat deletes rows not seen within the retention, never its own', async () => {
    const { a, b } = ids();
    await sut.beat(a, '1');
    await sut.beat(b, '1');
    const old = `${REPLICA_RETENTION_MS / 1000 + 5} seconds`;
    await dataSource.query(
      `UPDATE service_replicas SET seen_at = now() - $2::interval WHERE instance_id = ANY($1)`,
      [[a, b], old],
    );
    await sut.beat(b, '1');
    const left = await dataSource.query<{ instance_id: string }[]>(
      `SELECT instance_id FROM service_replicas WHERE instance_id = ANY($1)`,
      [[a, b]],
    );
    expect(left).toEqual([{ instance_id: b }]);
  });
});
