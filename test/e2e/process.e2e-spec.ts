import { spawnSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SERVICE_HEAP_LIMIT_MB,
  SERVICE_NODE_FLAGS,
  startedWithoutHeapLimit,
} from '../../src/common/node-flags';
import {
  isRunning,
  postmasterPid,
  spawnService,
  useTempDataDir,
  waitForExit,
} from '../support/service-process';
import { waitUntil } from '../support/wait';

/**
 * The bound on one start of the service: initdb (on a fresh data directory), the embedded PostgreSQL and the
 * migrations, which take far longer than spawnService's default on a loaded machine.
 */
const START_MS = 120_000;
/** A test that starts the service twice: both starts at their bound, plus the stops and checks between them. */
const TWO_STARTS_TIMEOUT_MS = 2 * START_MS + 60_000;

// Each test starts the service (and one runs `npm start`, which builds first): minutes on a loaded machine. The
// tests that start it twice set their own, longer timeout.
describe('the service as a process (embedded PostgreSQL, no DATABASE_URL)', { timeout: 180_000 }, () => {
  const dataDirOf = useTempDataDir('bff-proc-');

  it('exits non-zero and names every invalid variable', () => {
    const result = spawnSync(process.execPath, ['dist/src/main.js'], {
      env: { PATH: process.env.PATH ?? '', PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).toContain('LOG_LEVEL');
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).not.toContain('mysql://x');
  });

  it(
    'starts ready, stops on SIGTERM with exit 0 and no PostgreSQL left, restarts on the same data, and warns when started without the node options',
    async () => {
      const dataDir = dataDirOf();
      const first = await spawnService({ DATA_DIR: dataDir }, START_MS);
      const ready = await fetch(`${first.url}/health/ready`);
      expect(ready.status).toBe(200);
      const pgPid = await postmasterPid(join(dataDir, 'postgres'));
      expect(pgPid).not.toBeNull();
      const clusterBirth = (await stat(join(dataDir, 'postgres', 'PG_VERSION'))).mtimeMs;

      const started = Date.now();
      first.child.kill('SIGTERM');
      expect(await waitForExit(first.child, 10_000)).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      await waitUntil(() => !isRunning(pgPid as number), 5000);

      // Started as plain `node dist/src/main.js` this time, with a heap limit larger than the service's: it runs,
      // and says at startup which node option it lacks.
      const second = await spawnService({ DATA_DIR: dataDir }, START_MS, [
        process.execPath,
        '--max-old-space-size=2048',
        'dist/src/main.js',
      ]);
      expect((await fetch(`${second.url}/health/ready`)).status).toBe(200);
      expect(second.output()).toContain(`started without ${SERVICE_NODE_FLAGS.join(' ')}`);
      // Same cluster reused: initdb would have rewritten PG_VERSION.
      expect((await stat(join(dataDir, 'postgres', 'PG_VERSION'))).mtimeMs).toBe(clusterBirth);
      second.child.kill('SIGTERM');
      expect(await waitForExit(second.child, 10_000)).toBe(0);
    },
    TWO_STARTS_TIMEOUT_MS,
  );

  it('`npm start` hands SIGTERM to the service: npm exits 0, nothing left running', async () => {
    const dataDir = dataDirOf();
    const viaNpm = await spawnService({ DATA_DIR: dataDir }, 150_000, ['npm', 'start', '--silent']);
    expect((await fetch(`${viaNpm.url}/health/ready`)).status).toBe(200);
    // With the service's node options (src/common/node-flags.ts): its heap limit, and no warning about it.
    const limit = Number(/"heapLimitMb":(\d+)/.exec(viaNpm.output())?.[1]);
    expect(startedWithoutHeapLimit(limit)).toBe(false);
    expect(limit).toBeGreaterThanOrEqual(SERVICE_HEAP_LIMIT_MB);
    expect(viaNpm.output()).not.toContain('started without');
    const pgPid = await postmasterPid(join(dataDir, 'postgres'));
    viaNpm.child.kill('SIGTERM');
    expect(await waitForExit(viaNpm.child, 10_000)).toBe(0);
    await waitUntil(() => pgPid === null || !isRunning(pgPid), 5000);
    await expect(fetch(`${viaNpm.url}/health/live`)).rejects.toThrow(/fetch failed/);
  });

  it(
    'recovers after kill -9 (orphaned postmaster and stale lock file)',
    async () => {
      const dataDir = dataDirOf();
      const victim = await spawnService({ DATA_DIR: dataDir }, START_MS);
      const orphan = await postmasterPid(join(dataDir, 'postgres'));
      victim.child.kill('SIGKILL');
      await waitForExit(victim.child, 5000);
      expect(orphan !== null && isRunning(orphan)).toBe(true);

      const next = await spawnService({ DATA_DIR: dataDir }, START_MS);
      expect((await fetch(`${next.url}/health/ready`)).status).toBe(200);
      expect(orphan !== null && isRunning(orphan)).toBe(false);
      next.child.kill('SIGTERM');
      expect(await waitForExit(next.child, 10_000)).toBe(0);
    },
    TWO_STARTS_TIMEOUT_MS,
  );
});
