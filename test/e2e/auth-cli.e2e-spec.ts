import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_PATTERN } from '../../src/auth/api-key';
import { bearer, issueTestKey } from '../support/auth-helpers';
import {
  isRunning,
  postmasterPid,
  spawnService,
  useTempDataDir,
  waitForExit,
} from '../support/service-process';
import { waitUntil } from '../support/wait';
import { startTestApp, type TestApp } from '../support/test-app';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/src/auth/keys.cli.js …` (dist is built by the integration global setup). */
function keysCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/src/auth/keys.cli.js', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`keys ${args.join(' ')} timed out:\n${stdout}\n${stderr}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function keyIn(text: string): string {
  const key = text.split(/\s+/).find((w) => API_KEY_PATTERN.test(w));
  if (!key) throw new Error(`no key in output:\n${text}`);
  return key;
}

describe('npm run keys against DATABASE_URL (e2e)', () => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp();
    env = { NODE_ENV: 'test', DATABASE_URL: t.databaseUrl };
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());

  it('create prints a key once that works on GET /v1/me; revoke makes it 401 within the cache time', async () => {
    const created = await keysCli(
      ['create', '--name', 'cli-made', '--scopes', 'catalog:read,orders:write', '--any-subject'],
      env,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const key = keyIn(created.stdout);
    const me = await http().get('/v1/me').set(bearer(key)).expect(200);
    expect(me.body).toMatchObject({
      name: 'cli-made',
      scopes: ['catalog:read', 'orders:write'],
      binding: null,
      anySubject: true,
    });

    const listed = await keysCli(['list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key);
    const rows = JSON.parse(listed.stdout) as { id: string; name: string; keyPrefix: string }[];
    const row = rows.find((r) => r.id === me.body.id);
    expect(row).toMatchObject({ name: 'cli-made', keyPrefix: key.slice(0, 19), anySubject: true });
    expect((await keysCli(['list'], env)).stdout).toMatch(/cli-made .* any subject/);

    const revoked = await keysCli(['revoke', me.body.id as string], env);
    expect(revoked.code).toBe(0);
    // The key was verified (and cached) just above: the documented bound is API_KEY_CACHE_TTL_MS <= 5 s.
    const waited = await waitUntil(
      async () => (await http().get('/v1/me').set(bearer(key))).status === 401,
      5000,
    );
    expect(waited).toBeLessThanOrEqual(5000);
  });

  it('revoke disables the webhook endpoints of the revoked key and of the keys it issued, as the admin API does', async () => {
    const created = await keysCli(['create', '--name', 'cli-hooks', '--scopes', 'admin'], env);
    expect(created.code).toBe(0);
    const key = keyIn(created.stdout);
    const issuer = await http().get('/v1/me').set(bearer(key)).expect(200);
    // A key the revoked key issued (revoked with it, transitively), and a bystander that is not.
    const child = await http()
      .post('/v1/admin/api-clients')
      .set(bearer(key))
      .send({ name: 'cli-hooks-child', scopes: ['webhooks:write'] })
      .expect(201);
    const bystander = await issueTestKey(t.app, ['webhooks:write']);
    const endpointOf = async (k: string): Promise<string> =>
      (
        await http()
          .post('/v1/webhooks/endpoints')
          .set(bearer(k))
          .send({ url: 'https://127.0.0.1:9/hooks' })
          .expect(201)
      ).body.id as string;
    const ids = [await endpointOf(key), await endpointOf(child.body.key as string)];
    const other = await endpointOf(bystander.key);

    const revoked = await keysCli(['revoke', issuer.body.id as string], env);
    expect(revoked.stderr).toBe('');
    expect(revoked.code).toBe(0);

    const rows = await t.app
      .get(DataSource)
      .query<{ id: string; enabled: boolean; disabled_reason: string | null }[]>(
        `SELECT id, enabled, disabled_reason FROM webhook_endpoints WHERE id = ANY ($1::uuid[]) ORDER BY id`,
        [[...ids, other]],
      );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids)
      expect(byId.get(id)).toMatchObject({
        enabled: false,
        disabled_reason: expect.stringMatching(/revoked/),
      });
    expect(byId.get(other)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('create --user-subject/--integrator-subject issues a bound key: refused outside its subjects, listed with its binding', async () => {
    const created = await keysCli(
      [
        'create',
        '--name',
        'cli-bound',
        '--scopes',
        'transactions:write',
        '--user-subject',
        'acme-*',
        '--user-subject',
        'solo',
      ],
      env,
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('binding: users: acme-*, solo; integrators: (none)');
    const key = keyIn(created.stdout);
    const binding = { userSubjects: ['acme-*', 'solo'], integratorSubjects: [] };
    const me = await http().get('/v1/me').set(bearer(key)).expect(200);
    expect(me.body.binding).toEqual(binding);
    const refused = await http()
      .post('/v1/wallets/users/mallory/signatures')
      .set(bearer(key))
      .set('idempotency-key', 'cli-bound-1')
      .send({ platformInstructions: { instruction: 'cancel_listing_v1', params: [{}] } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'SUBJECT_NOT_ALLOWED', details: { field: 'subject' } });

    const listed = await keysCli(['list', '--json'], env);
    const rows = JSON.parse(listed.stdout) as { id: string; binding: unknown }[];
    expect(rows.find((r) => r.id === me.body.id)?.binding).toEqual(binding);
    const table = await keysCli(['list'], env);
    expect(table.stdout.split('\n').find((l) => l.includes(me.body.id as string))).toContain(
      'users: acme-*, solo; integrators: (none)',
    );
  });

  it.each([
    ['no command', 2, []],
    ['unknown command', 2, ['destroy']],
    ['create without a name', 2, ['create', '--scopes', 'admin']],
    ['create with an unknown scope', 2, ['create', '--name', 'x', '--scopes', 'root']],
    ['revoke without an id', 2, ['revoke']],
    ['revoke of an unknown id', 1, ['revoke', '00000000-0000-4000-8000-000000000000']],
  ])('%s exits %i without printing a key', async (_name, code, args) => {
    const result = await keysCli(args, env);
    expect(result.code).toBe(code);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/trb_live_[0-9A-Za-z]{43}_/);
  });

  it('generate prints a well-formed key and stores nothing', async () => {
    const result = await keysCli(['generate'], {});
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(API_KEY_PATTERN);
  });
});

describe(
  'npm run keys with the embedded database, service running or not (e2e)',
  { timeout: 180_000 },
  () => {
    const dataDirOf = useTempDataDir('bff-keys-');

    it('demo key on first start; CLI attaches to the running cluster; CLI alone starts and stops it', async () => {
      const dataDir = dataDirOf();
      const env = { DATA_DIR: dataDir };
      const service = await spawnService(env);
      try {
        // Demo admin key: printed once as a plain line, saved 0600, never in a JSON log line.
        const demoFile = join(dataDir, 'demo-api-key');
        const demoKey = (await readFile(demoFile, 'utf8')).trim();
        expect(demoKey).toMatch(API_KEY_PATTERN);
        expect((await stat(demoFile)).mode & 0o777).toBe(0o600);
        const lines = service.output().split('\n');
        expect(lines.filter((l) => l.includes(demoKey))).toHaveLength(1);
        expect(lines.filter((l) => l.startsWith('{')).some((l) => l.includes(demoKey))).toBe(false);
        const demoMe = await fetch(`${service.url}/v1/me`, { headers: bearer(demoKey) });
        expect(await demoMe.json()).toMatchObject({ name: 'demo', scopes: ['admin'] });

        const pgPid = await postmasterPid(join(dataDir, 'postgres'));
        const created = await keysCli(['create', '--name', 'while-running', '--scopes', 'catalog:read'], env);
        expect(created.code).toBe(0);
        const key = keyIn(created.stdout);
        const me = await fetch(`${service.url}/v1/me`, { headers: bearer(key) });
        expect(me.status).toBe(200);
        const { id } = (await me.json()) as { id: string };
        // The CLI connected to the service's cluster: same postmaster, service still ready.
        expect(await postmasterPid(join(dataDir, 'postgres'))).toBe(pgPid);
        expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);

        expect((await keysCli(['revoke', id], env)).code).toBe(0);
        await waitUntil(
          async () => (await fetch(`${service.url}/v1/me`, { headers: bearer(key) })).status === 401,
          5000,
        );
        expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
      } finally {
        service.child.kill('SIGTERM');
        expect(await waitForExit(service.child, 10_000)).toBe(0);
      }

      // Service stopped: the CLI starts the cluster for itself and stops it again.
      const listed = await keysCli(['list', '--json'], env);
      expect(listed.code).toBe(0);
      const names = (JSON.parse(listed.stdout) as { name: string }[]).map((r) => r.name).sort();
      expect(names).toEqual(['demo', 'while-running']);
      const leftover = await postmasterPid(join(dataDir, 'postgres'));
      expect(leftover === null || !isRunning(leftover)).toBe(true);

      // A second start does not print (or replace) the demo key.
      const again = await spawnService(env);
      try {
        expect(again.output()).not.toContain('Demo admin API key');
      } finally {
        again.child.kill('SIGTERM');
        expect(await waitForExit(again.child, 10_000)).toBe(0);
      }
    });
  },
);
