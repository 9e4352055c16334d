import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * DESIGN.md's dependency rules ("Rules of the house") fail on deliberate violations: fixture files in a
 * temporary tree shaped like the repository, linted with the repository's own .oxlintrc.json and
 * scripts/check-deps.mjs (the two halves of the rules that `npm run check` runs).
 */
const root = resolve('.');

function tree(prefix: string, files: Record<string, string>): string {
  const work = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  return work;
}

/** Files oxlint reports for a rule, from its unix output (`path:line:col: message [Error/rule]`). */
function reported(output: string, rule: string): string[] {
  return [
    ...new Set(
      output
        .split('\n')
        .filter((line) => line.includes(rule))
        .map((line) => line.split(':')[0]),
    ),
  ].sort();
}

/** Runs scripts/check-deps.mjs on a temporary tree; its exit status and the `file:line: …` lines it printed. */
function checkDeps(files: Record<string, string>): { status: number | null; lines: string[] } {
  const work = tree('bff-dep-rules-entity-', files);
  try {
    const run = spawnSync(process.execPath, [join(root, 'scripts/check-deps.mjs'), work], {
      encoding: 'utf8',
    });
    return { status: run.status, lines: run.stderr.split('\n').filter((l) => /^\S+:\d+: /.test(l)) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe('dependency rules (oxlint overrides in .oxlintrc.json)', () => {
  const axios = `import axios from 'axios';\nexport const a = axios;\n`;
  const nestAxios = `import { HttpService } from '@nestjs/axios';\nexport const h = HttpService;\n`;
  const cockatiel = `import { retry } from 'cockatiel';\nexport const r = retry;\n`;
  const sandbox = `import { startSandbox } from '../sandbox/sandbox.server';\nexport const s = startSandbox;\n`;
  const env = `export const port = process.env.PORT;\n`;
  const work = tree('bff-dep-rules-lint-', {
    // Violations.
    'src/auth/uses-axios.ts': axios,
    'src/orders/uses-nest-axios.ts': nestAxios,
    'src/sandbox/uses-cockatiel.ts': cockatiel,
    'src/main.ts': `${axios}import { startSandbox } from './sandbox/sandbox.server';\nexport const s = startSandbox;\n${env}`,
    'src/config/uses-sandbox.ts': sandbox,
    'src/upstream/uses-sandbox.ts': sandbox,
    'src/orders/uses-sandbox.ts': `export const load = () => import('../sandbox/sandbox.admin');\n`,
    'src/auth/reads-env.ts': env,
    'src/upstream/reads-env.ts': env,
    'src/upstream-target-helper.ts': `import { startSandbox } from './sandbox/sandbox.server';\nexport const s = startSandbox;\n`,
    // The startup wiring starts the sandbox: importing it reaches sandbox/ one step removed.
    'src/upstream/uses-target.ts': `import { resolveUpstreamTarget } from '../upstream-target';\nexport const t = resolveUpstreamTarget;\n`,
    'src/config/uses-target.ts': `import { loadStartupConfig } from '../upstream-target.js';\nexport const t = loadStartupConfig;\n`,
    'src/orders/uses-target.ts': `export const load = () => import('../upstream-target');\n`,
    // Allowed.
    'src/upstream/upstream.http.ts': `${nestAxios}${cockatiel.replace(/ r /g, ' r2 ')}`,
    'src/upstream-target.ts': `import { startSandbox } from './sandbox/sandbox.server';\nexport const s = startSandbox;\n`,
    'src/sandbox/sandbox.main.ts': `import { startSandbox } from './sandbox.server';\nexport const s = startSandbox;\n${env}`,
    'src/upstream-check.cli.ts': `import { resolveUpstreamTarget } from './upstream-target';\nexport const t = resolveUpstreamTarget;\n${env}`,
    'src/upstream-target.spec.ts': `import { loadStartupConfig } from './upstream-target';\nexport const t = loadStartupConfig;\n`,
    'src/config/app.config.ts': env,
    'src/database/data-source.ts': env,
    'src/auth/keys.cli.ts': env,
    'src/config/sandbox.config.ts': `import { x } from './sandbox.options';\nexport const y = x;\n`,
    'bench/run.ts': `import { startSandbox } from '../src/sandbox/sandbox.server';\nexport const s = startSandbox;\n${env}`,
    'test/e2e/x.e2e-spec.ts': `import { startSandbox } from '../../src/sandbox/sandbox.server';\nexport const s = startSandbox;\n${nestAxios}`,
  });
  copyFileSync(join(root, '.oxlintrc.json'), join(work, '.oxlintrc.json'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  let status: number | null = null;
  let output = '';
  beforeAll(() => {
    const run = spawnSync(
      join(root, 'node_modules/.bin/oxlint'),
      ['-c', '.oxlintrc.json', '-f', 'unix', '.'],
      {
        cwd: work,
        encoding: 'utf8',
      },
    );
    status = run.status;
    output = `${run.stdout}${run.stderr}`;
  });

  it('fails (exit 1) on the fixture tree', () => {
    expect(status).toBe(1);
  });

  it('axios, @nestjs/axios and cockatiel only under src/upstream/ (and in tests)', () => {
    const network = output
      .split('\n')
      .filter((l) => /no-restricted-imports/.test(l) && /'(axios|@nestjs\/axios|cockatiel)'/.test(l))
      .map((l) => l.split(':')[0])
      .sort();
    expect(network).toEqual([
      'src/auth/uses-axios.ts',
      'src/main.ts',
      'src/orders/uses-nest-axios.ts',
      'src/sandbox/uses-cockatiel.ts',
    ]);
    expect(output).not.toContain('src/upstream/upstream.http.ts');
  });

  it('src/sandbox/ only from the startup wiring, its own files, bench/ and test/', () => {
    const sandboxImports = output
      .split('\n')
      .filter((l) => /no-restricted-imports/.test(l) && /'[^']*sandbox\/[^']*'/.test(l))
      .map((l) => l.split(':')[0])
      .sort();
    expect(sandboxImports).toEqual([
      'src/config/uses-sandbox.ts',
      'src/orders/uses-sandbox.ts',
      'src/upstream-target-helper.ts',
      'src/upstream/uses-sandbox.ts',
    ]);
  });

  it('the startup wiring (src/upstream-target.ts) only from main.ts and the upstream:check CLI', () => {
    const wiringImports = output
      .split('\n')
      .filter((l) => /no-restricted-imports/.test(l) && /'[^']*upstream-target[^']*'/.test(l))
      .map((l) => l.split(':')[0])
      .sort();
    expect(wiringImports).toEqual([
      'src/config/uses-target.ts',
      'src/orders/uses-target.ts',
      'src/upstream/uses-target.ts',
    ]);
  });

  it('process.env only in config/, the data-source/database-url files and entry points', () => {
    expect(reported(output, 'no-restricted-properties')).toEqual([
      'src/auth/reads-env.ts',
      'src/upstream/reads-env.ts',
    ]);
  });
});

describe('dependency rules (scripts/check-deps.mjs: entity ownership)', () => {
  const entity = `export class ThingEntity {}\n`;

  it('passes when an entity is used by its own module, tests and migrations', () => {
    const result = checkDeps({
      'src/things/thing.entity.ts': entity,
      'src/things/thing.repository.ts': `import { ThingEntity } from './thing.entity';\nexport const T = ThingEntity;\n`,
      'src/things/nested/deep.ts': `import type { ThingEntity } from '../thing.entity';\nexport type T = ThingEntity;\n`,
      'test/integration/thing.integration-spec.ts': `import { ThingEntity } from '../../src/things/thing.entity';\nvoid ThingEntity;\n`,
      'migrations/1-CreateThings.ts': `import { ThingEntity } from '../src/things/thing.entity';\nvoid ThingEntity;\n`,
    });
    expect(result).toEqual({ status: 0, lines: [] });
  });

  it('fails naming each import of an entity from another module, and an entity outside a module folder', () => {
    const result = checkDeps({
      'src/things/thing.entity.ts': entity,
      'src/orders/orders.service.ts': `import { x } from './x';\n\nimport {\n  ThingEntity,\n} from '../things/thing.entity';\nexport const T = [x, ThingEntity];\n`,
      'src/orders/orders.lazy.ts': `export const load = () => import('../things/thing.entity.js');\n`,
      'bench/things.bench.ts': `export { ThingEntity } from '../src/things/thing.entity';\n`,
      'src/stray.entity.ts': entity,
    });
    expect(result.status).toBe(1);
    expect(result.lines.map((l) => l.split(': ')[0]).sort()).toEqual([
      'bench/things.bench.ts:1',
      'src/orders/orders.lazy.ts:1',
      'src/orders/orders.service.ts:5',
      'src/stray.entity.ts:1',
    ]);
    expect(result.lines.find((l) => l.startsWith('src/orders/orders.service.ts'))).toContain(
      'belongs to src/things/',
    );
  });
});

describe('dependency rules (scripts/check-deps.mjs: lease SQL only in durable work)', () => {
  it('passes for lease SQL inside src/durable-work/, in comments, and in specs', () => {
    const result = checkDeps({
      'src/durable-work/lease.sql.ts': 'export const Q = `SELECT 1 FROM t FOR UPDATE SKIP LOCKED`;\n',
      'src/orders/order.repository.ts':
        '// claims with FOR UPDATE SKIP LOCKED through durable work\nexport const Q = `SELECT 1`;\n',
      'src/orders/order.repository.spec.ts': 'export const Q = `UPDATE t SET lease_token = 1`;\n',
    });
    expect(result).toEqual({ status: 0, lines: [] });
  });

  it('fails naming each feature statement that writes its own lease SQL', () => {
    const result = checkDeps({
      'src/checkout/order.repository.ts': [
        'export const A = `SELECT id FROM orders',
        '  FOR UPDATE SKIP LOCKED`;',
        'export const B = `UPDATE orders SET lease_until = now()`;',
        "export const C = `INSERT INTO t VALUES (nextval('s'))`;",
        'export const D = `SELECT 1 FROM job_leases`;',
        '',
      ].join('\n'),
    });
    expect(result.status).toBe(1);
    // (Line 5 is reported twice: lease SQL, and job_leases is durable work's table.)
    expect([...new Set(result.lines.map((l) => l.split(': ')[0]))]).toEqual([
      'src/checkout/order.repository.ts:2',
      'src/checkout/order.repository.ts:3',
      'src/checkout/order.repository.ts:4',
      'src/checkout/order.repository.ts:5',
    ]);
  });
});

describe('dependency rules (scripts/check-deps.mjs: a table named in SQL only inside its owning module)', () => {
  it('passes for SQL on a table inside its owner, in comments, in prose, in specs and in tests', () => {
    const result = checkDeps({
      'src/catalog-sync/listing.repository.ts': 'export const Q = `SELECT 1 FROM listings`;\n',
      'src/checkout/order.repository.ts':
        'export const Q = `SELECT 1 FROM orders JOIN order_steps USING (id)`;\n',
      'src/listings/mirror-state.tracker.ts':
        "// re-read on every mirror_generation notification (UPDATE mirror_generation in catalog-sync)\nexport const m = 'the events and listings read API, from orders';\n",
      'src/listings/listings.service.spec.ts': 'export const Q = `SELECT 1 FROM listings`;\n',
      'test/e2e/x.e2e-spec.ts': 'export const Q = `UPDATE mirror_generation SET generation = 1`;\n',
      'migrations/1-CreateOrders.ts': 'export const Q = `CREATE TABLE orders (id uuid)`;\n',
      'src/checkout/order.entity.ts': "@Entity({ name: 'orders' })\nexport class OrderEntity {}\n",
    });
    expect(result).toEqual({ status: 0, lines: [] });
  });

  it('fails naming each statement on a table another module owns (the mirror, orders, deliveries, replicas)', () => {
    const result = checkDeps({
      'src/listings/mirror-state.tracker.ts': [
        'export const A = `SELECT generation FROM mirror_generation`;',
        "export const B = 'SELECT raw FROM protocol_config WHERE id';",
        'export const C = `SELECT e.name FROM orders o',
        '  JOIN events e USING (event_id)`;',
        'export const D = `UPDATE listings SET removed_at = now()`;',
        '',
      ].join('\n'),
      'src/status/status-figures.repository.ts': [
        "export const A = `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`;",
        'export const B = `SELECT * FROM service_replicas`;',
        'export const C = `SELECT * FROM status_samples`;',
        '',
      ].join('\n'),
    });
    expect(result.status).toBe(1);
    expect(result.lines.map((l) => l.split(': ')[0])).toEqual([
      'src/listings/mirror-state.tracker.ts:1',
      'src/listings/mirror-state.tracker.ts:2',
      'src/listings/mirror-state.tracker.ts:3',
      'src/listings/mirror-state.tracker.ts:4',
      'src/listings/mirror-state.tracker.ts:5',
      'src/status/status-figures.repository.ts:1',
      'src/status/status-figures.repository.ts:2',
    ]);
    expect(result.lines.find((l) => l.startsWith('src/listings/mirror-state.tracker.ts:3'))).toContain(
      'SQL on the table orders, which belongs to src/checkout/',
    );
    expect(result.lines.find((l) => l.startsWith('src/status/status-figures.repository.ts:1'))).toContain(
      'webhook_deliveries, which belongs to src/webhooks/',
    );
  });

  it("fails on a table a migration creates without an owner, and on an entity outside its table's owner", () => {
    const result = checkDeps({
      'migrations/2-CreateGadgets.ts': 'export const Q = `\n  CREATE TABLE gadgets (id uuid)`;\n',
      'src/status/order.entity.ts': "@Entity({ name: 'orders' })\nexport class OrderEntity {}\n",
    });
    expect(result.status).toBe(1);
    expect(result.lines).toEqual([
      expect.stringMatching(/^migrations\/2-CreateGadgets\.ts:2: table gadgets has no owning module/),
      expect.stringMatching(
        /^src\/status\/order\.entity\.ts:1: the entity of orders lives in src\/status\/ but .* src\/checkout\//,
      ),
    ]);
  });
});
