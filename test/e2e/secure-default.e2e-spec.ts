import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';
import { generateApiKey } from '../../src/auth/api-key';
import { DEVELOPMENT_API_KEY_PEPPER } from '../../src/config/auth.config';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { signSession, STATUS_COOKIE } from '../../src/status/status.session';
import { SERVICE_COMMAND, spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/** Runs the service and returns its exit code and output once it exits on its own (or null if it kept running). */
async function exitOf(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const [file, ...args] = SERVICE_COMMAND;
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  try {
    return { code: await waitForExit(child, 20_000), out };
  } catch {
    // Still running: it started where it must not.
    child.kill('SIGKILL');
    return { code: null, out };
  }
}

/**
 * Issue 31 items 2 and 9 with real processes: "local demo" is decided by what the process serves and reaches
 * (loopback HOST, the in-process sandbox), not by NODE_ENV. Anything else refuses to start without its secrets
 * (exit 2 naming each) and runs strict with them: no development pepper, no /docs, /metrics admin-only.
 */
describe('secure by default (e2e: service processes)', { timeout: 120_000 }, () => {
  const adminUrl = inject('databaseAdminUrl');
  const apiKey = generateApiKey();
  let databaseUrl = '';
  let sandbox: SandboxHandle;

  beforeAll(async () => {
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'secure-default',
      events: 2,
      listings: 4,
    });
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  const deployment = (): Record<string, string> => ({
    DATABASE_URL: databaseUrl,
    UPSTREAM_BASE_URL: sandbox.url,
    UPSTREAM_API_KEY: sandbox.admin.apiKey,
    BFF_BOOTSTRAP_API_KEY: apiKey,
    SYNC_ENABLED: 'false',
    SYNC_ON_STARTUP: 'false',
    SHUTDOWN_DRAIN_DELAY_MS: '0',
  });

  it.each([
    ['an UPSTREAM_BASE_URL and no NODE_ENV', (): Record<string, string> => deployment()],
    // Refused before it binds: the non-loopback address is never listened on.
    [
      'a non-loopback HOST on the in-process sandbox',
      (): Record<string, string> => ({ DATABASE_URL: databaseUrl, HOST: '0.0.0.0' }),
    ],
  ])('%s: exits 2 naming each missing secret, one line each', async (_name, env) => {
    const { code, out } = await exitOf(env());
    expect(code).toBe(2);
    const lines = out.split('\n').filter((l) => /^\s+- [A-Z_]+:/.test(l));
    expect(lines.map((l) => l.trim().slice(2).split(':')[0]).sort()).toEqual([
      'API_KEY_PEPPER',
      'CURSOR_SECRET',
    ]);
    expect(out).not.toContain(sandbox.admin.apiKey);
    expect(out).not.toContain('listening');
  });

  describe('with its secrets', () => {
    let service: ServiceProcess;
    beforeAll(async () => {
      service = await spawnService(
        { ...deployment(), ...TEST_DEPLOYMENT_ENV, STATUS_PAGE_ENABLED: 'true' },
        60_000,
      );
    }, 90_000);
    afterAll(async () => {
      if (service && service.child.exitCode === null) {
        service.child.kill('SIGTERM');
        await waitForExit(service.child, 15_000);
      }
    });

    it('starts, strict: /docs closed and /metrics behind the admin scope (item 9)', async () => {
      expect((await fetch(`${service.url}/docs/openapi.json`)).status).toBe(404);
      expect((await fetch(`${service.url}/metrics`)).status).toBe(401);
      const withKey = await fetch(`${service.url}/metrics`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(withKey.status).toBe(200);
      expect(await withKey.text()).toContain('# TYPE');
    });

    it('refuses a status-page cookie forged from the public development pepper and the admin client id', async () => {
      const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
      const { id } = (await me.json()) as { id: string };
      const devSecret = createHmac('sha256', DEVELOPMENT_API_KEY_PEPPER)
        .update('status-page-session-v1')
        .digest('base64');
      const forged = signSession(devSecret, id, Date.now() + 600_000, randomUUID());
      const res = await fetch(`${service.url}/status/panels`, {
        headers: { cookie: `${STATUS_COOKIE}=${forged}` },
      });
      expect(res.status).toBe(401);
    });
  });
});
