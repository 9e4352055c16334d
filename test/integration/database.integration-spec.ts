import { DataSource, Entity, PrimaryColumn } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { buildDataSourceOptions } from '../../src/database/data-source';
import { U64Column, U64_MAX } from '../../src/database/u64';
import { assertTestDatabaseName, createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

@Entity('u64_probe')
class U64Probe {
  @PrimaryColumn('int')
  id: number;

  @U64Column({ nullable: true })
  value: bigint | null;
}

describe('database (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let ds: DataSource;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    ds = new DataSource({ ...buildDataSourceOptions({ url }), entities: [U64Probe] });
    await ds.initialize();
    await ds.query('CREATE TABLE u64_probe (id int PRIMARY KEY, value u64)');
  });
  afterAll(async () => {
    await ds.destroy();
    await dropDatabase(adminUrl, url);
  });

  it('every migration is applied in the per-file copy of the template', async () => {
    expect(await ds.showMigrations()).toBe(false);
  });

  it('round-trips u64 values beyond 2^53 without losing a digit', async () => {
    const repo = ds.getRepository(U64Probe);
    for (const [id, value] of [
      [1, 0n],
      [2, 9_007_199_254_740_993n],
      [3, U64_MAX],
      [4, null],
    ] as const) {
      await repo.save({ id, value });
      expect((await repo.findOneByOrFail({ id })).value).toBe(value);
    }
  });

  it('the u64 domain rejects values outside 0..2^64-1 in SQL itself', async () => {
    await expect(ds.query(`INSERT INTO u64_probe VALUES (10, 18446744073709551616)`)).rejects.toThrow(/u64/);
    await expect(ds.query(`INSERT INTO u64_probe VALUES (11, -1)`)).rejects.toThrow(/u64/);
    await expect(ds.query(`INSERT INTO u64_probe VALUES (12, 1.5)`)).resolves.toBeDefined();
    const [row] = await ds.query(`SELECT value::text AS v FROM u64_probe WHERE id = 12`);
    expect(row.v).toBe('2');
  });

  it('the transformer refuses out-of-range bigints before they reach SQL', async () => {
    await expect(ds.getRepository(U64Probe).save({ id: 20, value: U64_MAX + 1n })).rejects.toThrow(
      RangeError,
    );
    await expect(ds.getRepository(U64Probe).save({ id: 21, value: -1n })).rejects.toThrow(RangeError);
  });

  it('refuses databases whose name does not say test', () => {
    expect(() => assertTestDatabaseName('postgres://u:p@127.0.0.1:5432/production')).toThrow(/refusing/);
    expect(() => assertTestDatabaseName('postgres://u:p@127.0.0.1:5432/bff_test_1')).not.toThrow();
  });
});
