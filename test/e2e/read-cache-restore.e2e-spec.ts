import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { MirrorSeeder } from '../support/read-mirror';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * Issue 23, item 8: the response cache never steps back. A restore or a failover can bring the mirror back to an
 * earlier generation number with other contents; replicas must serve the database as it is now, not the bodies
 * they cached under the higher numbers of the lost history (the default, non-strict cache: the tracker learns the
 * generation by LISTEN/NOTIFY and re-reads it every LISTINGS_STATE_REFRESH_MS).
 */
describe('Read API cache after the mirror generation goes back (e2e)', () => {
  let t: TestApp;
  let seed: MirrorSeeder;
  let db: Client;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_CATALOG_READ: '100000', LISTINGS_STATE_REFRESH_MS: '200' });
    seed = await MirrorSeeder.connect(t.databaseUrl);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    headers = bearer((await issueTestKey(t.app, ['catalog:read'])).key);
  });
  afterAll(async () => {
    await db?.end();
    await seed?.close();
    await t?.close();
  });

  const price = async (): Promise<unknown> => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/listings/7100/1', headers });
    return res.statusCode === 200 ? res.json<{ price: { minor: string } }>().price.minor : res.statusCode;
  };
  const generation = async (): Promise<bigint> =>
    BigInt((await db.query<{ g: string }>(`SELECT generation::text AS g FROM mirror_generation`)).rows[0].g);

  it('a lower generation with other contents is served as soon as it is seen, never the old bodies', async () => {
    await seed.events([{ eventId: '7100', name: 'Restored', startAt: '2027-03-01T00:00:00Z' }]);
    const before = await generation();
    await seed.listings([{ eventId: '7100', ticketId: '1', price: '100' }]);
    await seed.listings([{ eventId: '7100', ticketId: '1', price: '300' }]);
    await waitUntil(async () => (await price()) === '300', 5_000);
    // Past a state refresh, so the tracker is at the last generation and the answer is cached under it.
    await new Promise((r) => setTimeout(r, 600));
    expect(await price()).toBe('300');

    // The restore: the database comes back at an earlier generation, with a price this service never served
    // (no NOTIFY: a restored database does not announce itself).
    await db.query(`UPDATE listings SET ask_price_minor = 200 WHERE event_id = 7100 AND ticket_id = 1`);
    await db.query(`UPDATE mirror_generation SET generation = $1`, [before.toString()]);

    await waitUntil(async () => (await price()) === '200', 5_000);
    expect(await price()).toBe('200');
  });
});
