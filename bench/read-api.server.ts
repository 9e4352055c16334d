import 'reflect-metadata';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { createApp } from '../src/app.factory';
import { upstreamOptionsFromConfig } from '../src/upstream/upstream.options';
import { loadStartupConfig, resolveUpstreamTarget } from '../src/upstream-target';

/**
 * One server of the read benchmark, in its own process (so the load generator never shares its event
 * loop): `app` is the service itself (configured by the environment), `baseline` the hand-written
 * comparison — plain Fastify + pg, the same three queries over the same tables, the same page bodies
 * (minus the service's signed cursors, exact money formatting, freshness, auth, validation, logs).
 * Prints `READY <port>` once listening; exits on SIGTERM.
 */
const listing = (r: Record<string, unknown>): Record<string, unknown> => ({
  event_id: r.event_id,
  ticket_id: r.ticket_id,
  price: { minor: r.ask_price_minor },
  seller: (r.raw as { seller?: string }).seller ?? null,
  expires_at: r.expires_at,
  first_seen_at: (r.first_seen_at as Date).toISOString(),
  last_seen_at: (r.last_seen_at as Date).toISOString(),
  upstream_fields: r.raw,
});
const columns = `event_id::text AS event_id, ticket_id::text AS ticket_id, ask_price_minor::text AS ask_price_minor,
  expires_at::text AS expires_at, raw, first_seen_at, last_seen_at`;

async function startBaseline(): Promise<{ port: number; close: () => Promise<void> }> {
  const pool = new Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DB_POOL_SIZE ?? 10),
  });
  const app = Fastify({ logger: false });

  app.route<{ Params: { event: string }; Querystring: { cursor?: string } }>({
    method: 'GET',
    url: '/events/:event/listings',
    handler: async (req) => {
      const after = req.query.cursor
        ? (JSON.parse(Buffer.from(req.query.cursor, 'base64url').toString()) as [string, string])
        : null;
      const order = 'ORDER BY listings.ask_price_minor, listings.ticket_id LIMIT 21';
      const { rows } = after
        ? await pool.query(
            `SELECT ${columns} FROM listings WHERE event_id = $1::numeric AND removed_at IS NULL
               AND (ask_price_minor, ticket_id) > ($2::numeric, $3::numeric) ${order}`,
            [req.params.event, after[0], after[1]],
          )
        : await pool.query(
            `SELECT ${columns} FROM listings WHERE event_id = $1::numeric AND removed_at IS NULL ${order}`,
            [req.params.event],
          );
      const items = rows.slice(0, 20);
      const last = items.at(-1) as Record<string, string> | undefined;
      const next =
        rows.length > 20 && last
          ? Buffer.from(JSON.stringify([last.ask_price_minor, last.ticket_id])).toString('base64url')
          : null;
      return { items: items.map(listing), next_cursor: next };
    },
  });

  app.route<{ Querystring: { q: string } }>({
    method: 'GET',
    url: '/events',
    handler: async (req) => {
      const { rows } = await pool.query(
        `SELECT event_id::text AS event_id, name, start_at_raw, start_at, first_seen_at, last_seen_at FROM events
       WHERE removed_at IS NULL AND lower(name) LIKE $1 ORDER BY events.start_at, events.event_id LIMIT 21`,
        [`%${req.query.q.toLowerCase()}%`],
      );
      return {
        items: rows.slice(0, 20).map((r: Record<string, unknown>) => ({
          event_id: r.event_id,
          name: r.name,
          start_at: (r.start_at as Date | null)?.toISOString() ?? null,
          start_at_raw: r.start_at_raw,
          first_seen_at: (r.first_seen_at as Date).toISOString(),
          last_seen_at: (r.last_seen_at as Date).toISOString(),
        })),
        next_cursor: null,
      };
    },
  });

  app.route<{ Params: { event: string; ticket: string } }>({
    method: 'GET',
    url: '/listings/:event/:ticket',
    handler: async (req, reply) => {
      const { rows } = await pool.query(
        `SELECT ${columns} FROM listings WHERE event_id = $1::numeric AND ticket_id = $2::numeric`,
        [req.params.event, req.params.ticket],
      );
      const row = rows[0] as Record<string, unknown> | undefined;
      if (!row) return reply.code(404).send({ error: 'not found' });
      return listing(row);
    },
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

async function startService(): Promise<{ port: number; close: () => Promise<void> }> {
  const configs = loadStartupConfig(process.env);
  const upstream = await resolveUpstreamTarget(configs.upstream, {
    ...configs.sandboxOptions,
    events: 1,
    listings: 10,
  });
  const { app } = await createApp({
    config: configs.app,
    authConfig: configs.auth,
    syncConfig: configs.sync,
    listingsConfig: configs.listings,
    databaseUrl: process.env.DATABASE_URL ?? '',
    upstream: upstreamOptionsFromConfig(configs.upstream, upstream),
  });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: async () => {
      await app.close();
      await upstream.sandbox?.close();
    },
  };
}

async function main(): Promise<void> {
  const server = process.argv[2] === 'baseline' ? await startBaseline() : await startService();
  process.stdout.write(`READY ${server.port}\n`);
  process.on('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
