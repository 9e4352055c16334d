import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MINUTE_MS, ORDERS_RECORDED, minuteOf, orderFigures } from '../../src/status/status.aggregation';
import { StatusSampleRepository } from '../../src/status/status-sample.repository';
import { openTestDataSource, type TestDataSource } from '../support/test-database';

describe(StatusSampleRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let sut: StatusSampleRepository;
  let dbNow: number;

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 4 });
    dataSource = db.dataSource;
    sut = new StatusSampleRepository(dataSource);
    const [row] = await dataSource.query<{ now: number }[]>(
      `SELECT (extract(epoch FROM now()) * 1000)::float8 AS now`,
    );
    dbNow = row?.now ?? 0;
  });
  afterAll(() => db?.close());

  it("two replicas writing the same past minute's order figures store them once (no double count)", async () => {
    const minute = minuteOf(dbNow) - 5 * MINUTE_MS;
    const { marker, figures } = orderFigures(
      minute,
      [{ state: 'confirmed', attempt: 1, count: 2 }],
      [100, 200],
    );
    // Two replicas' recorders racing on the same minute.
    const written = await Promise.all([sut.writeOnce(marker, figures), sut.writeOnce(marker, figures)]);
    expect(await sut.writeOnce(marker, figures)).toBe(false);
    expect(written.filter(Boolean)).toHaveLength(1);
    const read = await sut.read(['orders.final', ORDERS_RECORDED], minute);
    const stored = read.filter((s) => s.minute === minute).sort((a, b) => a.figure.localeCompare(b.figure));
    expect(stored).toEqual([
      { figure: 'orders.final', label: 'confirmed', minute, value: 2 },
      { figure: ORDERS_RECORDED, label: '', minute, value: 2 },
    ]);
    expect((await sut.recordedMinutes(ORDERS_RECORDED, minute)).has(minute)).toBe(true);
  });

  it('stores one complete set when replicas read different finals for the same minute, never a mix', async () => {
    const minute = minuteOf(dbNow) - 7 * MINUTE_MS;
    // Replica A read before a late commit, replica B after it: different outcomes, attempts and times.
    const a = orderFigures(minute, [{ state: 'confirmed', attempt: 1, count: 2 }], [100, 200]);
    const b = orderFigures(
      minute,
      [
        { state: 'confirmed', attempt: 1, count: 2 },
        { state: 'rejected', attempt: 2, count: 1 },
      ],
      [100, 200, 900],
    );
    const figures = ['orders.final', 'orders.attempts', 'orders.final_p50_ms', 'orders.final_p99_ms'];
    const storedSet = async () =>
      (await sut.read([ORDERS_RECORDED, ...figures], minute))
        .filter((s) => s.minute === minute)
        .map((s) => `${s.figure}|${s.label}|${s.value}`)
        .sort();
    const asSet = (f: typeof a) =>
      [f.marker, ...f.figures].map((s) => `${s.figure}|${s.label}|${s.value}`).sort();
    for (let round = 0; round < 5; round++) {
      await dataSource.query(`DELETE FROM status_samples WHERE minute = to_timestamp($1 / 1000.0)`, [minute]);
      const [wroteA, wroteB] = await Promise.all([
        sut.writeOnce(a.marker, a.figures),
        sut.writeOnce(b.marker, b.figures),
      ]);
      expect(wroteA !== wroteB).toBe(true);
      expect(await storedSet()).toEqual(asSet(wroteA ? a : b));
    }
    // Written one after the other, the second adds nothing either.
    await dataSource.query(`DELETE FROM status_samples WHERE minute = to_timestamp($1 / 1000.0)`, [minute]);
    await sut.writeOnce(a.marker, a.figures);
    await sut.writeOnce(b.marker, b.figures);
    expect(await storedSet()).toEqual(asSet(a));
  });

  it("each replica's upstream counts add to its own row of the current minute; reading sums every replica", async () => {
    const op = `op-${Date.now()}`;
    await sut.addToCurrentMinute('replica-a', [{ figure: 'upstream.requests', label: op, value: 3 }]);
    await sut.addToCurrentMinute('replica-a', [{ figure: 'upstream.requests', label: op, value: 4 }]);
    await sut.addToCurrentMinute('replica-b', [{ figure: 'upstream.requests', label: op, value: 5 }]);
    const rows = await dataSource.query<{ instance_id: string; value: number }[]>(
      `SELECT instance_id, value FROM status_samples WHERE label = $1 ORDER BY instance_id`,
      [op],
    );
    expect(rows).toEqual([
      { instance_id: 'replica-a', value: 7 },
      { instance_id: 'replica-b', value: 5 },
    ]);
    const read = await sut.read(['upstream.requests'], minuteOf(dbNow) - MINUTE_MS);
    expect(read.filter((s) => s.label === op).reduce((a, s) => a + s.value, 0)).toBe(12);
  });

  it('prunes the minutes before the cut-off and keeps the rest', async () => {
    const old = minuteOf(dbNow) - 49 * 60 * MINUTE_MS;
    const kept = minuteOf(dbNow) - 47 * 60 * MINUTE_MS;
    await sut.writeOnce({ figure: 'prune.test', label: '', minute: old, value: 1 }, []);
    await sut.writeOnce({ figure: 'prune.test', label: '', minute: kept, value: 1 }, []);
    await sut.prune(minuteOf(dbNow) - 48 * 60 * MINUTE_MS);
    expect((await sut.read(['prune.test'], 0)).map((s) => s.minute)).toEqual([kept]);
  });

  it('refuses a sample that is not at the start of a minute (the table holds minutes only)', async () => {
    await expect(
      dataSource.query(
        `INSERT INTO status_samples (figure, minute, value) VALUES ('x', to_timestamp(90.5), 1)`,
      ),
    ).rejects.toThrow(/check constraint/);
  });
});
