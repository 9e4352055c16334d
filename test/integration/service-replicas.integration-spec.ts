import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  REPLICA_RETENTION_MS,
  ServiceReplicaRepository,
} from '../../src/replicas/service-replica.repository';
import { openTestDataSource, type TestDataSource } from '../support/test-database';

/** Ages come from the database clock; a statement or two of slack. */
const SLACK_MS = 500;

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
    expect((await sut.beat(a, '1.2.3')).some((row) => row.instanceId === a)).toBe(false);
    const seen = await rowOf(b, a);
    expect(seen).toMatchObject({
      stopped: false,
      throttleFactor: null,
      throttledMsAgo: null,
      pausedForMs: 0,
    });
    expect(Math.abs(seen!.seenMsAgo)).toBeLessThan(SLACK_MS);
    const [row] = await dataSource.query<{ version: string; same: boolean }[]>(
      `SELECT version, started_at = seen_at AS same FROM service_replicas WHERE instance_id = $1`,
      [a],
    );
    expect(row).toEqual({ version: '1.2.3', same: true });
    await dataSource.query(
      `UPDATE service_replicas SET started_at = now() - interval '7 seconds', seen_at = now() - interval '7 seconds'
       WHERE instance_id = $1`,
      [a],
    );
    const aged = await rowOf(b, a);
    expect(aged!.seenMsAgo).toBeGreaterThanOrEqual(7_000);
    expect(aged!.seenMsAgo).toBeLessThan(7_000 + SLACK_MS);
    // The next beat refreshes seen_at and keeps started_at.
    await sut.beat(a, '1.2.3');
    expect(Math.abs((await rowOf(b, a))!.seenMsAgo)).toBeLessThan(SLACK_MS);
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
    await sut.publishThrottle(a, 0.5, 2_000);
    const first = (await rowOf(b, a))!;
    expect(first.throttleFactor).toBe(0.5);
    expect(first.throttledMsAgo).toBeGreaterThanOrEqual(0);
    expect(first.throttledMsAgo).toBeLessThan(SLACK_MS);
    expect(first.pausedForMs).toBeGreaterThan(2_000 - SLACK_MS);
    expect(first.pausedForMs).toBeLessThanOrEqual(2_000);
    await sut.publishThrottle(a, 0.25, 100);
    await sut.publishThrottle(a, 0.125, undefined);
    const later = (await rowOf(b, a))!;
    expect(later.throttleFactor).toBe(0.125);
    expect(later.pausedForMs).toBeGreaterThan(2_000 - SLACK_MS);
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
