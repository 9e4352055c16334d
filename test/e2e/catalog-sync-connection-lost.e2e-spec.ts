import { spawn } from 'node:child_process';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { passApplicationName } from '../../src/catalog-sync/sync-pass.runner';
import { DEFAULT_SANDBOX_ADMIN_KEY, DEFAULT_SANDBOX_API_KEY } from '../../src/config/sandbox-defaults';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

interface PassView {
  status: string;
  pages: number;
  error: string | null;
}

/**
 * The connection a sync pass holds for its whole walk is terminated by the server (`pg_terminate_backend`,
 * as an operator, a failover or a restart would). pg emits `error` on a checked-out client that nobody
 * listens to: the process must not crash; the pass is recorded failed with a clear error, its lease is
 * released, and the next pass completes. The service runs as a real process: a crash is a crash.
 */
describe('Catalog sync pass whose connection is terminated (e2e, service process)', () => {
  const adminUrl = inject('databaseAdminUrl');
  const adminKey = generateApiKey();
  let databaseUrl = '';
  let service: ServiceProcess;
  let sandboxUrl = '';

  const api = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  const pass = async (id: string): Promise<PassView> =>
    (await (await api('GET', `/v1/admin/sync/${id}`)).json()) as PassView;
  const waitFinished = async (id: string, timeoutMs: number): Promise<PassView> => {
    let view: PassView = { status: 'running', pages: 0, error: null };
    await waitUntil(
      async () => {
        try {
          view = await pass(id);
        } catch (error) {
          // Most likely the service died: say so, with its last words.
          const code = await waitForExit(service.child, 2000).catch(() => 'still running');
          throw new Error(
            `GET pass failed (${String(error)}); service exit: ${code}\n${service.output().slice(-1500)}`,
            { cause: error },
          );
        }
        return view.status !== 'running';
      },
      timeoutMs,
      100,
    );
    return view;
  };

  const sandboxFaults = async (method: 'PUT' | 'DELETE', rules?: unknown[]): Promise<void> => {
    const res = await fetch(`${sandboxUrl}/__sandbox/faults`, {
      method,
      headers: {
        'x-sandbox-admin-key': DEFAULT_SANDBOX_ADMIN_KEY,
        ...(rules === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: rules === undefined ? undefined : JSON.stringify({ rules }),
    });
    expect(res.status).toBe(200);
  };
  const withDb = async <T>(fn: (db: Client) => Promise<T>): Promise<T> => {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      return await fn(db);
    } finally {
      await db.end();
    }
  };
  const backendsOf = (applicationName: string): Promise<number[]> =>
    withDb(async (db) =>
      (
        await db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [applicationName],
        )
      ).rows.map((r) => r.pid),
    );
  /** Terminates every backend of the test database with this application_name; returns how many. */
  const terminate = async (applicationName: string): Promise<number> => {
    // pids first, then the terminations: one statement could end the asking session too.
    const pids = await backendsOf(applicationName);
    await withDb(async (db) => {
      for (const pid of pids) await db.query('SELECT pg_terminate_backend($1)', [pid]);
    });
    return pids.length;
  };

  beforeAll(async () => {
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    service = await spawnService({
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      BFF_BOOTSTRAP_API_KEY: adminKey,
      // Operator-triggered passes only; 20 pages of 20 listings, 300 ms each: the walk takes ~6 s.
      SYNC_ENABLED: 'false',
      SYNC_PAGE_SIZE: '20',
      SANDBOX_EVENTS: '10',
      SANDBOX_LISTINGS: '400',
      SANDBOX_FAULTS: JSON.stringify([{ operation: 'listings', kind: 'latency', latencyMs: 300 }]),
    });
    sandboxUrl = /"sandboxUrl":"(http:\/\/[^"]+)"/.exec(service.output())?.[1] ?? '';
    if (sandboxUrl === '') throw new Error('no sandboxUrl in the startup line');
  }, 60_000);

  afterAll(async () => {
    if (service?.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await waitForExit(service.child, 15_000).catch(() => service.child.kill('SIGKILL'));
    }
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it('fails that pass cleanly (recorded failed, lease released), the process lives on, and the next pass completes', async () => {
    const started = await api('POST', '/v1/admin/sync', { resource: 'listings' });
    expect(started.status).toBe(202);
    const { passId } = (await started.json()) as { passId: string };
    // Mid-walk: a batch is written, more pages to come.
    await waitUntil(async () => (await pass(passId)).pages > 0, 15_000, 100);

    expect(await terminate(passApplicationName(passId))).toBe(1);

    const failed = await waitFinished(passId, 15_000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^DatabaseConnectionLostError: The database connection was lost/);
    // Still serving: not crashed, not restarted.
    expect(service.child.exitCode).toBeNull();
    expect(service.child.signalCode).toBeNull();
    expect((await api('GET', '/health/live')).status).toBe(200);

    // The lease went with the pass: the next pass starts at once (no 409) and completes.
    await sandboxFaults('DELETE');
    const next = await api('POST', '/v1/admin/sync', { resource: 'listings' });
    expect(next.status).toBe(202);
    const { passId: nextId } = (await next.json()) as { passId: string };
    expect(nextId).not.toBe(passId);
    expect((await waitFinished(nextId, 30_000)).status).toBe('completed');
    expect(service.output()).not.toMatch(/uncaught|unhandled error/i);
  }, 90_000);

  it('npm run sync:verify whose connection is terminated mid-walk exits 2 naming the lost connection, no crash', async () => {
    await sandboxFaults('PUT', [{ operation: 'listings', kind: 'latency', latencyMs: 300 }]);
    const child = spawn(process.execPath, ['dist/src/sync-verify.cli.js'], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        DATABASE_URL: databaseUrl,
        UPSTREAM_BASE_URL: sandboxUrl,
        UPSTREAM_API_KEY: DEFAULT_SANDBOX_API_KEY,
        SYNC_PAGE_SIZE: '20',
        // A sandbox process by URL is a deployment: the CLI starts with its secrets like the service.
        ...TEST_DEPLOYMENT_ENV,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // stdout carries its JSON log lines; stderr its one-line verdict (and a crash's stack).
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      // Connected, then a second into the listings walk (events go fast, each listings page takes 300 ms).
      await waitUntil(async () => (await backendsOf('sync-verify')).length > 0, 15_000, 100);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await terminate('sync-verify')).toBeGreaterThan(0);
      const code = await waitForExit(child, 15_000);
      expect({ code, stderr }).toEqual({
        code: 2,
        stderr:
          'sync:verify: The database connection was lost: terminating connection due to administrator command\n',
      });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await sandboxFaults('DELETE');
    }
  }, 60_000);
});
