#!/usr/bin/env node
// npm run lint:deps [-- <root>]: the dependency rule of DESIGN.md ("Rules of the house") that oxlint's
// no-restricted-imports cannot express because it is generic over module names — each table has one owning
// module: a `*.entity.ts` lives in a module folder `src/<m>/` and is imported only from `src/<m>/`, from
// tests (`test/`) and from migrations (`migrations/`); and a table's name appears in SQL only inside its owning
// module (TABLE_OWNERS below). The other rules (axios/cockatiel only in upstream/,
// who may import sandbox/, where process.env is read) are oxlint overrides in .oxlintrc.json.
// Prints one `file:line: message` per violation and exits 1 when there is any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(process.argv[2] ?? '.');
const SCANNED = ['src', 'test', 'bench', 'migrations', 'scripts'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Static imports/exports, side-effect imports, import() and require() with a literal specifier. */
const SPECIFIER =
  /\bfrom\s*['"]([^'"\n]+)['"]|\bimport\s*['"]([^'"\n]+)['"]|\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)|\brequire\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;
/** src/<module>/…/<name>.entity.ts → module. */
const ENTITY = /^src\/([^/]+)\/(?:.+\/)?[^/]+\.entity\.ts$/;

const toPosix = (path) => path.split(sep).join('/');

function* walk(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (SOURCE.test(entry.name)) yield path;
  }
}

/** The file a relative specifier names (as written, or with .ts/.js or /index.ts), root-relative. */
function resolveRelative(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base,
    `${base}.ts`,
    base.replace(/\.js$/, '.ts'),
    `${base}.mts`,
    `${base}.js`,
    join(base, 'index.ts'),
  ];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return toPosix(relative(root, found ?? `${base}.ts`));
}

function lineOf(text, index) {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

const violations = [];
for (const top of SCANNED) {
  for (const file of walk(join(root, top))) {
    const importer = toPosix(relative(root, file));
    if (importer.endsWith('.entity.ts') && !ENTITY.test(importer)) {
      violations.push(`${importer}:1: an entity lives in its owning module's folder (src/<module>/)`);
    }
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? match[4];
      if (!specifier.startsWith('.')) continue;
      const target = resolveRelative(file, specifier);
      const owner = ENTITY.exec(target)?.[1];
      if (owner === undefined) continue;
      const allowed =
        importer.startsWith(`src/${owner}/`) ||
        importer.startsWith('test/') ||
        importer.startsWith('migrations/');
      if (!allowed) {
        violations.push(
          `${importer}:${lineOf(text, match.index)}: imports ${target}, which belongs to src/${owner}/ ` +
            `(each table has one owning module: call ${owner}'s service instead)`,
        );
      }
    }
  }
}

// Durable work (DESIGN.md): lease, claim and fencing SQL lives in src/durable-work/ only; features compose its
// fragments (lease.sql.ts, named-lease.repository.ts). Checked inside template literals (the SQL), not comments.
const LEASE_SQL =
  /SKIP LOCKED|nextval\(|\blease_until\s*[=<>]|\blease_token\s*=|\bfencing_token\s*[=+]|\bjob_leases\b/;
const TEMPLATE = /`[^`]*`/g;
for (const file of walk(join(root, 'src'))) {
  const path = toPosix(relative(root, file));
  if (path.startsWith('src/durable-work/') || path.endsWith('.spec.ts')) continue;
  const text = readFileSync(file, 'utf8');
  for (const literal of text.matchAll(TEMPLATE)) {
    const hit = LEASE_SQL.exec(literal[0]);
    if (!hit) continue;
    violations.push(
      `${path}:${lineOf(text, literal.index + hit.index)}: lease SQL (${hit[0]}) outside src/durable-work/ ` +
        `(compose durable work's fragments: src/durable-work/lease.sql.ts)`,
    );
  }
}

// Each table has one owning module (DESIGN.md, README "Dependency rules", docs/ARCHITECTURE.md "Tables"): its name
// appears in SQL only inside src/<owner>/; every other module asks the owner's service (its module's only export).
// The map is declared here, beside the rule, and kept true by the checks below it: every table a migration creates
// has an owner here, and every entity's table is owned by the module folder the entity lives in.
const TABLE_OWNERS = {
  api_clients: 'auth',
  events: 'catalog-sync',
  listings: 'catalog-sync',
  protocol_config: 'catalog-sync',
  mirror_generation: 'catalog-sync',
  sync_passes: 'catalog-sync',
  event_freshness: 'catalog-sync',
  event_demand: 'catalog-sync',
  orders: 'checkout',
  order_steps: 'checkout',
  order_traces: 'checkout',
  ledger_transactions: 'transactions',
  ledger_transaction_events: 'transactions',
  ledger_transaction_orders: 'transactions',
  job_leases: 'durable-work',
  webhook_endpoints: 'webhooks',
  outbox_events: 'webhooks',
  outbox_horizon: 'webhooks',
  webhook_deliveries: 'webhooks',
  service_replicas: 'replicas',
  status_samples: 'status',
  status_sessions: 'status',
  watches: 'watches',
  watch_alerts: 'watches',
};

const CREATE_TABLE =
  /\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:public\.)?"?([a-z_][a-z0-9_]*)/g;
for (const file of walk(join(root, 'migrations'))) {
  const path = toPosix(relative(root, file));
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(CREATE_TABLE)) {
    if (TABLE_OWNERS[match[1]] !== undefined) continue;
    violations.push(
      `${path}:${lineOf(text, match.index)}: table ${match[1]} has no owning module ` +
        `(add it to TABLE_OWNERS in scripts/check-deps.mjs and to docs/ARCHITECTURE.md "Tables")`,
    );
  }
}

const ENTITY_TABLE = /@Entity\(\s*\{[^}]*\bname:\s*['"]([a-z_][a-z0-9_]*)['"]/g;
for (const file of walk(join(root, 'src'))) {
  const path = toPosix(relative(root, file));
  const module = ENTITY.exec(path)?.[1];
  if (module === undefined) continue;
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(ENTITY_TABLE)) {
    const owner = TABLE_OWNERS[match[1]];
    if (owner === module) continue;
    violations.push(
      `${path}:${lineOf(text, match.index)}: the entity of ${match[1]} lives in src/${module}/ but ` +
        `TABLE_OWNERS (scripts/check-deps.mjs) gives it to ${owner === undefined ? 'no module' : `src/${owner}/`}`,
    );
  }
}

// Checked inside template and quoted literals of src/ (the SQL), not in comments, after an SQL keyword in capitals
// (FROM, JOIN, UPDATE, INTO, TABLE, EXISTS, TRUNCATE), so prose like "the listings of an event" passes; specs,
// tests and benches may read any table directly.
const TABLE_SQL = new RegExp(
  `\\b(?:FROM|JOIN|UPDATE|INTO|TABLE|EXISTS|TRUNCATE)\\s+(?:ONLY\\s+)?(?:public\\.)?"?(${Object.keys(TABLE_OWNERS).join('|')})\\b`,
  'g',
);
const LITERAL = /`[^`]*`|'[^'\n]*'|"[^"\n]*"/g;
for (const file of walk(join(root, 'src'))) {
  const path = toPosix(relative(root, file));
  if (path.endsWith('.spec.ts')) continue;
  const module = /^src\/([^/]+)\//.exec(path)?.[1];
  const text = readFileSync(file, 'utf8');
  for (const literal of text.matchAll(LITERAL)) {
    for (const hit of literal[0].matchAll(TABLE_SQL)) {
      const owner = TABLE_OWNERS[hit[1]];
      if (owner === module) continue;
      violations.push(
        `${path}:${lineOf(text, literal.index + hit.index)}: SQL on the table ${hit[1]}, which belongs to ` +
          `src/${owner}/ (each table has one owning module: ask ${owner}'s service for the figure instead)`,
      );
    }
  }
}

if (violations.length > 0) {
  for (const v of violations) console.error(v);
  console.error(`${violations.length} dependency rule violation(s) (DESIGN.md, rules of the house)`);
  process.exit(1);
}
console.log(
  'dependency rules hold: every *.entity.ts is used only by its owning module, tests and migrations; ' +
    'lease SQL only in src/durable-work/; every table is named in SQL only inside its owning module',
);
