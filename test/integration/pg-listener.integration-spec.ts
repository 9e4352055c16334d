import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataSourceOptions } from '../../src/database/data-source';
import { PgListener } from '../../src/database/pg-listener';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

describe(`${PgListener.name} (real PostgreSQL)`, () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let ds: DataSource;
  let notifier: Client;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    ds = new DataSource(buildDataSourceOptions({ url }));
    notifier = new Client({ connectionString: url });
    await notifier.connect();
  });
  afterAll(async () => {
    await notifier.end();
    await dropDatabase(adminUrl, url);
  });

  const notify = (channel: string, payload: string) =>
    notifier.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const listenConnections = async (): Promise<number> => {
    const { rows } = await notifier.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'ticket-resale-bff-listen'`,
    );
    return rows[0].n;
  };

  it('serves every channel on one connection: each handler gets its own channel, and null once it listens', async () => {
    const sut = new PgListener(ds);
    const a: (string | null)[] = [];
    const b: (string | null)[] = [];
    const b2: (string | null)[] = [];
    try {
      await sut.listen('test_a', (p) => a.push(p));
      await sut.listen('test_b', (p) => b.push(p));
      await sut.listen('test_b', (p) => b2.push(p));
      expect([a, b, b2]).toEqual([[null], [null], [null]]);
      expect(await listenConnections()).toBe(1);

      await notify('test_a', 'one');
      await notify('test_b', 'two');
      await notify('test_other', 'nobody');
      await waitUntil(() => b2.length === 2, 5000);

      expect(a).toEqual([null, 'one']);
      expect(b).toEqual([null, 'two']);
      expect(b2).toEqual([null, 'two']);
    } finally {
      await sut.onModuleDestroy();
    }
  });

  it('reconnects after losing its connection, listens again on every channel and calls each handler with null', async () => {
    const sut = new PgListener(ds);
    const calls: (string | null)[] = [];
    try {
      await sut.listen('test_again', (p) => calls.push(p), 100);
      await notifier.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'ticket-resale-bff-listen'`,
      );
      const waited = await waitUntil(() => calls.filter((c) => c === null).length >= 2, 5000);
      expect(waited).toBeLessThan(5000);
      await notify('test_again', 'after');
      await waitUntil(() => calls.includes('after'), 5000);
      expect(calls).toContain('after');
    } finally {
      await sut.onModuleDestroy();
    }
  });

  it('after the close calls no handler and holds no connection', async () => {
    const sut = new PgListener(ds);
    const calls: (string | null)[] = [];
    await sut.listen('test_closed', (p) => calls.push(p));
    await sut.onModuleDestroy();
    await notify('test_closed', 'late');
    await waitUntil(async () => (await listenConnections()) === 0, 5000);

    expect(sut.listening).toBe(false);
    expect(await listenConnections()).toBe(0);
    expect(calls).toEqual([null]);
  });

  it('refuses a channel name LISTEN would need quoted', async () => {
    const sut = new PgListener(ds);
    await expect(sut.listen('bad; DROP TABLE x', () => undefined)).rejects.toThrow(/not a channel name/);
    await sut.onModuleDestroy();
  });
});
