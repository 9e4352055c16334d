import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { MirrorSeeder } from '../support/read-mirror';
import { startTestApp, type TestApp } from '../support/test-app';

type Json = Record<string, unknown>;
/**
 * The API-key authenticator's refresh-ahead: a cached key is re-read off the answer's path (not awaited) at most
 * once per half API_KEY_CACHE_TTL_MS per key, whichever request happens to find it due (the bench: one per ~1,000
 * answers). Not part of the answer's own work, so not counted.
 */
const KEY_REVERIFY = /FROM "api_clients"/;
type LightResponse = Awaited<ReturnType<TestApp['app']['inject']>>;

/** The statements of the request under way (its async context). */
const request = new AsyncLocalStorage<string[]>();

/** `Client.prototype.query` that notes each statement issued inside a request's context, with its text. */
function countingQuery(original: typeof Client.prototype.query): typeof Client.prototype.query {
  return function (this: Client, ...args: unknown[]): unknown {
    const q = args[0] as string | { text: string };
    const text = typeof q === 'string' ? q : q.text;
    if (!KEY_REVERIFY.test(text)) request.getStore()?.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof Client.prototype.query;
}

/**
 * Issue 34's read bench scenarios (R1 an event's listings by price at a cursor, R2 the events search, R3 one
 * listing) with the response cache off, as the bench runs them: each must cost ONE statement, as the plain
 * Fastify + pg baseline's does. Every `pg` query issued inside a request's own async context is counted (the
 * service's background loops run outside it, so they never count), whatever pool or connection it goes through.
 */
describe('read API round trips per request (cache off)', () => {
  let t: TestApp;
  let seed: MirrorSeeder;
  let db: Client;
  let headers: Record<string, string>;
  // The method itself (restored after the suite), read without binding it to any client.
  const original = Reflect.get<typeof Client.prototype, 'query'>(Client.prototype, 'query');

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_CATALOG_READ: '100000', LISTINGS_CACHE_MAX_BYTES: '0' });
    seed = await MirrorSeeder.connect(t.databaseUrl);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    headers = bearer((await issueTestKey(t.app, ['catalog:read'])).key);
    await seed.events([
      { eventId: '1', name: 'Opera Night', startAt: '2027-01-02T00:00:00Z' },
      { eventId: '2', name: 'Opera Matinee', startAt: '2027-01-03T00:00:00Z' },
    ]);
    await seed.listings(
      Array.from({ length: 45 }, (_, i) => ({
        eventId: '1',
        ticketId: String(100 + i),
        price: String(1000 + i),
      })),
    );
    await seed.completedPass('events', new Date(Date.now() - 60_000));
    await seed.completedPass('listings', new Date(Date.now() - 60_000));
    await seed.protocolConfig(6, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
    Client.prototype.query = countingQuery(original);
  });
  afterAll(async () => {
    Client.prototype.query = original;
    await db?.end();
    await seed?.close();
    await t?.close();
  });

  /** The answer of `url` and the statements it issued. */
  async function measured(url: string): Promise<{ body: Json; statements: string[] }> {
    const statements: string[] = [];
    // Dispatched inside the context (a callback: the promise form dispatches only when awaited, outside it).
    const fastify = t.app.getHttpAdapter().getInstance();
    const res = await new Promise<LightResponse>((resolve, reject) =>
      request.run(statements, () =>
        fastify.inject({ method: 'GET', url, headers }, (error, answer) =>
          error || !answer ? reject(error ?? new Error('no answer')) : resolve(answer),
        ),
      ),
    );
    expect({ url, status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    return { body: res.json<Json>(), statements };
  }

  /** Asks `url` until the state tracker has seen the last commit (the answer shows `ready`). */
  async function settled(url: string, ready: (body: Json) => boolean): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (ready((await measured(url)).body)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${url} never settled`);
  }

  it('R1, R2 and R3 each cost one statement, first pages and cursors alike', async () => {
    await settled(
      '/v1/events/1/listings?sort=price_asc',
      (b) => ((b.items as Json[])[0]?.price as Json | undefined)?.amount !== undefined,
    );
    const first = await measured('/v1/events/1/listings?sort=price_asc');
    expect(first.statements).toHaveLength(1);
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    const second = await measured(`/v1/events/1/listings?sort=price_asc&cursor=${cursor}`);
    expect(second.statements).toHaveLength(1);
    expect((second.body.items as Json[])[0]).toMatchObject({ ticket_id: '120' });

    const search = await measured('/v1/events?q=opera');
    expect(search.statements).toHaveLength(1);
    expect((search.body.items as Json[]).map((e) => e.event_id)).toEqual(['1', '2']);

    const one = await measured('/v1/listings/1/105');
    expect(one.statements).toHaveLength(1);
    expect(one.body).toMatchObject({ ticket_id: '105', price: { minor: '1005', amount: '0.001005' } });
  });

  it("an event walked on its own answers with that walk's data_as_of and still one statement per page", async () => {
    const walkedAt = new Date(Date.now() - 1000);
    await db.query('BEGIN');
    await db.query(`INSERT INTO event_freshness (event_id, data_as_of, pass_id) VALUES (1, $1, 1)`, [
      walkedAt,
    ]);
    const { rows } = await db.query<{ g: string }>(
      'UPDATE mirror_generation SET generation = generation + 1 RETURNING generation::text AS g',
    );
    await db.query(`SELECT pg_notify('mirror_generation', $1)`, [rows[0]?.g ?? '0']);
    await db.query('COMMIT');
    const iso = walkedAt.toISOString();
    await settled('/v1/events/1/listings?sort=price_asc', (b) => b.data_as_of === iso);

    const page = await measured('/v1/events/1/listings?sort=price_asc');
    expect(page.body.data_as_of).toBe(iso);
    expect(page.statements).toHaveLength(1);
    const one = await measured('/v1/listings/1/105');
    expect(one.body.data_as_of).toBe(iso);
    expect(one.statements).toHaveLength(1);
    // The cross-event list keeps the global as-of (the listings pass), one statement too.
    const search = await measured('/v1/events?q=opera');
    expect(search.body.data_as_of).not.toBe(iso);
    expect(search.statements).toHaveLength(1);
  });
});
