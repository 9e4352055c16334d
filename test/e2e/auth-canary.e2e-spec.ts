import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

interface Column {
  table_schema: string;
  table_name: string;
  column_name: string;
  data_type: string;
}

/** Rows of every text-like, json or bytea column (arrays as text) in the database containing `needle`. */
async function columnsContaining(databaseUrl: string, needle: string): Promise<string[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: columns } = await client.query<Column>(
      `SELECT table_schema, table_name, column_name, data_type
         FROM information_schema.columns c
         JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE t.table_type = 'BASE TABLE'
          AND table_schema NOT IN ('pg_catalog', 'information_schema')
          AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea', 'USER-DEFINED'))`,
    );
    expect(columns.length).toBeGreaterThan(0);
    const hits: string[] = [];
    for (const c of columns) {
      const ref = `${client.escapeIdentifier(c.table_schema)}.${client.escapeIdentifier(c.table_name)}`;
      const col = client.escapeIdentifier(c.column_name);
      const predicate =
        c.data_type === 'bytea'
          ? `position(convert_to($1, 'UTF8') in ${col}) > 0 OR encode(${col}, 'escape') LIKE '%' || $1 || '%'`
          : `${col}::text LIKE '%' || $1 || '%'`;
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${ref} WHERE ${predicate}`,
        [needle],
      );
      if (Number(rows[0].n) > 0) hits.push(`${c.table_name}.${c.column_name}`);
    }
    return hits;
  } finally {
    await client.end();
  }
}

describe('canary secrets never leak (e2e)', () => {
  const canaryKey = generateApiKey();
  const upstreamCanary = `upstream-canary-${randomBytes(12).toString('hex')}`;
  const pepperCanary = `pepper-canary-${randomBytes(16).toString('hex')}`;
  const canaries = [canaryKey, upstreamCanary, pepperCanary];
  let t: TestApp;
  const bodies: string[] = [];
  const record = (res: request.Response): request.Response => {
    bodies.push(res.text ?? '', JSON.stringify(res.headers));
    return res;
  };

  beforeAll(async () => {
    t = await startTestApp({
      BFF_BOOTSTRAP_API_KEY: canaryKey,
      UPSTREAM_API_KEY: upstreamCanary,
      API_KEY_PEPPER: pepperCanary,
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('the canary key works, and appears in no log line, response body, metric or database column', async () => {
    const http = () => request(t.app.getHttpServer());
    const me = record(await http().get('/v1/me').set(bearer(canaryKey)).expect(200));
    expect(me.body.scopes).toEqual(['admin']);
    record(await http().get('/v1/me').set('x-api-key', canaryKey));
    // Every kind of answer, each presenting the canary key.
    record(await http().get('/v1/admin/api-clients').set(bearer(canaryKey)));
    record(
      await http()
        .post('/v1/admin/api-clients')
        .set(bearer(canaryKey))
        .send({ name: 'child', scopes: ['catalog:read'] }),
    );
    record(
      await http()
        .post('/v1/admin/api-clients')
        .set(bearer(canaryKey))
        .send({ name: 'x', scopes: ['bad'], junk: 1 }),
    );
    record(await http().get('/v1/admin/api-clients/not-a-uuid').set(bearer(canaryKey)));
    record(await http().get('/no/such/route').set(bearer(canaryKey)));
    record(
      await http()
        .post('/v1/admin/api-clients')
        .set(bearer(canaryKey))
        .set('content-type', 'application/json')
        .send('{"name":'),
    );
    // Near misses of the canary (one character off) and the canary in other places.
    const nearMiss = `${canaryKey.slice(0, -1)}${canaryKey.endsWith('A') ? 'B' : 'A'}`;
    record(await http().get('/v1/me').set(bearer(nearMiss)));
    record(await http().get('/v1/me').set('authorization', `Basic ${canaryKey}`));
    const reader = await issueTestKey(t.app, ['catalog:read']);
    record(await http().get('/v1/admin/api-clients').set(bearer(reader.key)).set('x-api-key', canaryKey));
    record(await http().get('/health/ready').set(bearer(canaryKey)));
    const metrics = record(await http().get('/metrics').expect(200));
    expect(metrics.text).toContain('http_request_duration_seconds');
    record(await http().get('/docs/openapi.json'));
    // The status page: the key in a header, in the login body (right and one character off), the session it gives.
    record(await http().get('/status').set(bearer(canaryKey)));
    const login = record(await http().post('/status/login').send({ key: canaryKey }).expect(204));
    record(await http().post('/status/login').send({ key: nearMiss }));
    record(
      await http()
        .get('/status/panels')
        .set('cookie', login.headers['set-cookie'] ?? ''),
    );
    record(await http().get('/v1/admin/status').set(bearer(canaryKey)));

    expect(t.logs.lines.length).toBeGreaterThan(10);
    for (const canary of canaries) {
      expect(t.logs.text, 'log lines').not.toContain(canary);
      for (const body of bodies) expect(body, 'response').not.toContain(canary);
      expect(await columnsContaining(t.databaseUrl, canary), 'database columns').toEqual([]);
    }
  });

  it('the bootstrap client is stored as a hash only (the one column allowed to derive from the key)', async () => {
    const client = new Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; key_prefix: string; n: number }>(
        `SELECT name, key_prefix, octet_length(key_hash) AS n FROM api_clients WHERE name = 'bootstrap'`,
      );
      expect(rows).toEqual([{ name: 'bootstrap', key_prefix: canaryKey.slice(0, 19), n: 32 }]);
    } finally {
      await client.end();
    }
  });
});
