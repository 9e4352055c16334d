import { Client } from 'pg';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';

/** Canonical listing row for comparisons: u64 values as decimal strings, raw without key order. */
export interface ComparableListing {
  key: string;
  askPriceMinor: string;
  raw: string;
}

export interface ComparableEvent {
  key: string;
  name: string;
  startAtRaw: string;
  raw: string;
}

const U64_FIELDS = ['event_id', 'ticket_id', 'ask_price_minor', 'permit_version', 'expires_at'];

/** JSON with sorted keys, u64 identifiers as strings (the mirror's canonical raw). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function normalise(item: Record<string, unknown>): Record<string, unknown> {
  const out = { ...item };
  for (const f of U64_FIELDS) if (typeof out[f] === 'number') out[f] = String(out[f]);
  return out;
}

/**
 * Every item of a sandbox collection walked with plain fetch + JSON.parse (no client code under test),
 * faults must be off. The sandbox sends u64 values as strings, so JSON.parse is exact.
 */
export async function walkSandbox(
  baseUrl: string,
  apiKey: string,
  path: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100_000; page++) {
    const url = new URL(path, baseUrl);
    url.searchParams.set('limit', '1000');
    if (cursor) url.searchParams.set('cursor', cursor);
    const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
    if (res.status !== 200) throw new Error(`sandbox ${path} answered ${res.status}`);
    const body = (await res.json()) as { items: Record<string, unknown>[]; next_cursor: string | null };
    items.push(...body.items.map(normalise));
    cursor = body.next_cursor;
    if (cursor === null) return items;
  }
  throw new Error('sandbox walk did not end');
}

export async function withPg<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function sandboxListings(items: Record<string, unknown>[]): ComparableListing[] {
  return items
    .map((i) => ({
      key: `${String(i.event_id)}:${String(i.ticket_id)}`,
      askPriceMinor: String(i.ask_price_minor),
      raw: canonicalJson(i),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

export function sandboxEvents(items: Record<string, unknown>[]): ComparableEvent[] {
  return items
    .map((i) => ({
      key: String(i.event_id),
      name: String(i.name),
      startAtRaw: String(i.start_at),
      raw: canonicalJson(i),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** Active mirror rows in the same shape. */
export async function mirrorListings(databaseUrl: string): Promise<ComparableListing[]> {
  return withPg(databaseUrl, async (c) => {
    const { rows } = await c.query<{ e: string; t: string; p: string; raw: unknown }>(
      `SELECT event_id::text AS e, ticket_id::text AS t, ask_price_minor::text AS p, raw
       FROM listings WHERE removed_at IS NULL`,
    );
    return rows
      .map((r) => ({ key: `${r.e}:${r.t}`, askPriceMinor: r.p, raw: canonicalJson(r.raw) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
  });
}

export async function mirrorEvents(databaseUrl: string): Promise<ComparableEvent[]> {
  return withPg(databaseUrl, async (c) => {
    const { rows } = await c.query<{ e: string; name: string; s: string; raw: unknown }>(
      `SELECT event_id::text AS e, name, start_at_raw AS s, raw FROM events WHERE removed_at IS NULL`,
    );
    return rows
      .map((r) => ({ key: r.e, name: r.name, startAtRaw: r.s, raw: canonicalJson(r.raw) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
  });
}

/**
 * A fingerprint of every tuple version of the mirror tables (ctid + xmin): any insert, update or delete
 * changes it, a pass that writes nothing leaves it equal. Deterministic, unlike pg_stat_user_tables whose
 * counters other backends flush lazily.
 */
export async function mirrorTupleFingerprint(databaseUrl: string): Promise<string> {
  return withPg(databaseUrl, async (c) => {
    const { rows } = await c.query<{ f: string }>(
      `SELECT (SELECT md5(coalesce(string_agg(ctid::text || ':' || xmin::text, ',' ORDER BY ctid), ''))
               FROM listings) || (SELECT md5(coalesce(string_agg(ctid::text || ':' || xmin::text, ',' ORDER BY ctid), ''))
               FROM events) AS f`,
    );
    return rows[0]?.f ?? '';
  });
}

export async function passes(databaseUrl: string): Promise<
  {
    id: string;
    resource: string;
    status: string;
    started_at: Date;
    finished_at: Date | null;
    upserted: string;
    removed: string;
    holder: string;
    error: string | null;
  }[]
> {
  return withPg(databaseUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT id::text, resource, status, started_at, finished_at, upserted::text, removed::text, holder, error
       FROM sync_passes ORDER BY sync_passes.id`,
    );
    return rows as never;
  });
}

/** One query on a fresh connection to `url` (a test's read of a database the service processes write). */
export function pgQuery(url: () => string): <T>(sql: string, params?: unknown[]) => Promise<T[]> {
  return <T>(sql: string, params: unknown[] = []) =>
    withPg(url(), async (c) => (await c.query(sql, params)).rows as T[]);
}

/**
 * The environment of a service process syncing from an in-test sandbox into `databaseUrl` (test, info logs, the
 * sandbox's key), plus the test's own SYNC_* and UPSTREAM_* settings.
 */
export function syncServiceEnv(
  databaseUrl: string,
  sandbox: { url: string; admin: { apiKey: string } },
  extra: Record<string, string>,
): Record<string, string> {
  return {
    NODE_ENV: 'test',
    ...TEST_DEPLOYMENT_ENV,
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    UPSTREAM_BASE_URL: sandbox.url,
    UPSTREAM_API_KEY: sandbox.admin.apiKey,
    UPSTREAM_ENVIRONMENT: 'sandbox',
    ...extra,
  };
}
