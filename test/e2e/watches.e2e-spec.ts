import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClientsService } from '../../src/auth/api-clients.service';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

const ENV = {
  WEBHOOKS_WORKER_INTERVAL_MS: '100',
  WATCHES_MAX_PER_CLIENT: '3',
  RATE_LIMIT_DEFAULT: '100000',
};

const fieldsOf = (res: request.Response): string[] =>
  (res.body.error.details as { field: string }[]).map((d) => d.field);

/** Issue 32 item 3: price watches over HTTP, and their `watch.matched` arriving signed and in the feed. */
describe('Watches (e2e)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let dataSource: DataSource;
  let client: TestClient;
  let other: TestClient;
  let receiver: WebhookReceiver;
  let observed = Date.UTC(2026, 0, 1);

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    client = await issueTestKey(t.app, ['watches:write', 'webhooks:write']);
    other = await issueTestKey(t.app, ['watches:write', 'webhooks:write']);
    receiver = await WebhookReceiver.start();
    await dataSource.query(
      `INSERT INTO events (event_id, name, start_at_raw, raw, first_seen_at, last_seen_at, observed_at)
       VALUES (9101, 'Opera night', '2027-01-01T20:00:00Z', '{}', now(), now(), now()),
              (9102, 'Rock at the opera house', '2027-01-02T20:00:00Z', '{}', now(), now(), now()),
              (9103, 'Jazz brunch', '2027-01-03T11:00:00Z', '{}', now(), now(), now())`,
    );
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const create = (key: string, body: Record<string, unknown>) =>
    request(server).post('/v1/watches').set(bearer(key)).send(body);
  /** A listing written to the mirror as a sync page would (its triggers run the match). */
  const list = async (eventId: number, ticketId: number, price: string): Promise<void> => {
    observed += 1000;
    await dataSource.query(
      `INSERT INTO listings AS l (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, observed_at)
       VALUES ($1, $2, $3, '{}', now(), now(), $4)
       ON CONFLICT (event_id, ticket_id) DO UPDATE SET ask_price_minor = excluded.ask_price_minor,
         observed_at = excluded.observed_at, removed_at = NULL`,
      [eventId, ticketId, price, new Date(observed)],
    );
  };

  it('creates, gets, lists (keyset, by subject and event) and deletes a watch; another client sees none of it', async () => {
    const created = await create(client.key, {
      event_id: '9103',
      max_price_minor: '18446744073709551615',
      subject: 'alice',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    }).expect(201);
    expect(created.body).toMatchObject({
      event_id: '9103',
      q: null,
      max_price_minor: '18446744073709551615',
      min_drop_percent: null,
      subject: 'alice',
      expired: false,
      last_alerted_at: null,
    });
    const second = await create(client.key, {
      event_id: '9101',
      min_drop_percent: 15,
      subject: 'bob',
    }).expect(201);
    const id = created.body.id as string;
    expect((await request(server).get(`/v1/watches/${id}`).set(bearer(client.key)).expect(200)).body).toEqual(
      created.body,
    );
    const page1 = await request(server).get('/v1/watches?limit=1').set(bearer(client.key)).expect(200);
    expect(page1.body.items.map((w: { id: string }) => w.id)).toEqual([second.body.id]);
    const page2 = await request(server)
      .get(`/v1/watches?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor as string)}`)
      .set(bearer(client.key))
      .expect(200);
    expect(page2.body.items.map((w: { id: string }) => w.id)).toEqual([id]);
    const bySubject = await request(server)
      .get('/v1/watches?subject=bob')
      .set(bearer(client.key))
      .expect(200);
    expect(bySubject.body.items.map((w: { id: string }) => w.id)).toEqual([second.body.id]);
    const byEvent = await request(server)
      .get('/v1/watches?event_id=9103')
      .set(bearer(client.key))
      .expect(200);
    expect(byEvent.body.items.map((w: { id: string }) => w.id)).toEqual([id]);
    // A cursor of another filter is refused, naming it.
    const mixed = await request(server)
      .get(`/v1/watches?limit=1&subject=bob&cursor=${encodeURIComponent(page1.body.next_cursor as string)}`)
      .set(bearer(client.key))
      .expect(400);
    expect(fieldsOf(mixed)).toEqual(['cursor']);

    await request(server).get(`/v1/watches/${id}`).set(bearer(other.key)).expect(404);
    await request(server).delete(`/v1/watches/${id}`).set(bearer(other.key)).expect(404);
    expect((await request(server).get('/v1/watches').set(bearer(other.key)).expect(200)).body.items).toEqual(
      [],
    );
    await request(server).delete(`/v1/watches/${id}`).set(bearer(client.key)).expect(204);
    await request(server).get(`/v1/watches/${id}`).set(bearer(client.key)).expect(404);
    await request(server).get('/v1/watches/not-a-uuid').set(bearer(client.key)).expect(404);
    await request(server)
      .delete(`/v1/watches/${second.body.id as string}`)
      .set(bearer(client.key))
      .expect(204);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['neither event_id nor q', { max_price_minor: '1' }, 'event_id'],
    ['both event_id and q', { event_id: '9101', q: 'opera', max_price_minor: '1' }, 'event_id'],
    ['an event_id that is no u64', { event_id: '18446744073709551616', max_price_minor: '1' }, 'event_id'],
    ['a numeric event_id', { event_id: 9101, max_price_minor: '1' }, 'event_id'],
    ['no price condition', { event_id: '9101' }, 'max_price_minor'],
    ['a negative max price', { event_id: '9101', max_price_minor: '-1' }, 'max_price_minor'],
    ['a drop of 100 %', { event_id: '9101', min_drop_percent: 100 }, 'min_drop_percent'],
    ['a drop of 0 %', { event_id: '9101', min_drop_percent: 0 }, 'min_drop_percent'],
    ['an unsafe subject', { event_id: '9101', max_price_minor: '1', subject: 'alice/../bob' }, 'subject'],
    [
      'expires_at not RFC 3339',
      { event_id: '9101', max_price_minor: '1', expires_at: 'tomorrow' },
      'expires_at',
    ],
    [
      'expires_at in the past',
      { event_id: '9101', max_price_minor: '1', expires_at: '2020-01-01T00:00:00Z' },
      'expires_at',
    ],
    [
      'expires_at too far',
      { event_id: '9101', max_price_minor: '1', expires_at: '2100-01-01T00:00:00Z' },
      'expires_at',
    ],
    ['a cooldown of 0', { event_id: '9101', max_price_minor: '1', cooldown_seconds: 0 }, 'cooldown_seconds'],
    ['q matching no event', { q: 'ballet', max_price_minor: '1' }, 'q'],
    ['q matching several events', { q: 'opera', max_price_minor: '1' }, 'q'],
    ['an unknown field', { event_id: '9101', max_price_minor: '1', price: '1' }, 'price'],
  ])('400 naming the field: %s', async (_name, body, field) => {
    const res = await create(client.key, body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(res)).toEqual([field]);
  });

  it('q resolves to the one event whose name contains it, and lists the candidates when several do', async () => {
    const ambiguous = await create(client.key, { q: 'OPERA', max_price_minor: '1' }).expect(400);
    expect(JSON.stringify(ambiguous.body.error.details)).toContain('9101');
    expect(JSON.stringify(ambiguous.body.error.details)).toContain('9102');
    const res = await create(client.key, { q: 'opera h', max_price_minor: '1' }).expect(201);
    expect(res.body).toMatchObject({ event_id: '9102', q: 'opera h' });
    await request(server)
      .delete(`/v1/watches/${res.body.id as string}`)
      .set(bearer(client.key))
      .expect(204);
  });

  it('403 without watches:write (admin has it); a bound key may watch only for its subjects', async () => {
    const noScope = await issueTestKey(t.app, ['webhooks:write']);
    const denied = await create(noScope.key, { event_id: '9101', max_price_minor: '1' }).expect(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    await request(server).get('/v1/watches').set(bearer(noScope.key)).expect(403);
    const admin = await issueTestKey(t.app, ['admin']);
    const byAdmin = await create(admin.key, { event_id: '9101', max_price_minor: '1' }).expect(201);
    await request(server)
      .delete(`/v1/watches/${byAdmin.body.id as string}`)
      .set(bearer(admin.key))
      .expect(204);

    const issued = await t.app
      .get(ApiClientsService)
      .issue('bound-watcher', ['watches:write'], null, { userSubjects: ['alice-*'], integratorSubjects: [] });
    const outside = await create(issued.key, {
      event_id: '9101',
      max_price_minor: '1',
      subject: 'bob',
    }).expect(403);
    expect(outside.body.error).toMatchObject({ code: 'SUBJECT_NOT_ALLOWED', details: { field: 'subject' } });
    expect(JSON.stringify(outside.body)).not.toContain('bob');
    const inside = await create(issued.key, {
      event_id: '9101',
      max_price_minor: '1',
      subject: 'alice-1',
    }).expect(201);
    expect(inside.body.subject).toBe('alice-1');
    // No subject: the client's own watch, no wallet named.
    await create(issued.key, { event_id: '9101', max_price_minor: '1' }).expect(201);
  });

  it('at most WATCHES_MAX_PER_CLIENT unexpired watches per client (409); deleting or expiring one makes room', async () => {
    const capped = await issueTestKey(t.app, ['watches:write']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await create(capped.key, { event_id: '9101', max_price_minor: '1' }).expect(201)).body.id as string,
      );
    const over = await create(capped.key, { event_id: '9101', max_price_minor: '1' }).expect(409);
    expect(over.body.error).toMatchObject({ code: 'CONFLICT', details: { limit: 3 } });
    // Another client is not affected.
    const fresh = await issueTestKey(t.app, ['watches:write']);
    await create(fresh.key, { event_id: '9101', max_price_minor: '1' }).expect(201);
    await request(server).delete(`/v1/watches/${ids[0]}`).set(bearer(capped.key)).expect(204);
    await create(capped.key, { event_id: '9101', max_price_minor: '1' }).expect(201);
    await dataSource.query(`UPDATE watches SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      ids[1],
    ]);
    const expired = await request(server).get(`/v1/watches/${ids[1]}`).set(bearer(capped.key)).expect(200);
    expect(expired.body.expired).toBe(true);
    await create(capped.key, { event_id: '9101', max_price_minor: '1' }).expect(201);
  });

  it('a cheaper listing arrives as a signed watch.matched at the watch owner only, and in its feed', async () => {
    const endpoint = await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send({ url: `${receiver.url}/mine` })
      .expect(201);
    await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(other.key))
      .send({ url: `${receiver.url}/theirs` })
      .expect(201);
    const watch = await create(client.key, {
      event_id: '9103',
      max_price_minor: '5000',
      subject: 'alice',
    }).expect(201);
    await list(9103, 1, '6000');
    await list(9103, 2, '4999');
    await list(9103, 2, '4999'); // seen again, unchanged: no second alert
    await waitUntil(() => receiver.received.length >= 1, 10_000);
    const [hook] = receiver.received;
    const verified = new Webhook(endpoint.body.secret as string).verify(
      hook?.body ?? '',
      (hook?.headers ?? {}) as Record<string, string>,
    ) as {
      id: string;
      type: string;
      data: Record<string, unknown>;
    };
    expect(verified.type).toBe('watch.matched');
    expect(verified.data).toEqual({
      watch_id: watch.body.id,
      subject: 'alice',
      listing: {
        event_id: '9103',
        ticket_id: '2',
        price: expect.objectContaining({ minor: '4999' }) as unknown,
      },
      previous_price: null,
      reason: 'listed_under_max',
    });
    // The feed serves an event once every transaction older than it has ended, cluster-wide (the feed's gap-free
    // rule): another test's open transaction on the shared cluster can hold it back for a moment after delivery.
    type FeedItem = { id: string; type: string; data: { event_id?: string; ticket_id?: string } };
    let matched: FeedItem[] = [];
    let listed: string[] = [];
    await waitUntil(async () => {
      const feed = await request(server).get('/v1/notifications').set(bearer(client.key)).expect(200);
      const items = feed.body.items as FeedItem[];
      matched = items.filter((e) => e.type === 'watch.matched');
      listed = items
        .filter((e) => e.type === 'listing.listed' && e.data.event_id === '9103')
        .map((e) => String(e.data.ticket_id));
      return matched.length > 0 && listed.length >= 2;
    }, 10_000);
    expect(matched.map((e) => e.id)).toEqual([verified.id]);
    // The watch also subscribed its owner's feed (not its endpoint: no catalog type there) to 9103's changes.
    expect(listed.sort()).toEqual(['1', '2']);
    const theirs = await request(server).get('/v1/notifications').set(bearer(other.key)).expect(200);
    expect((theirs.body.items as { type: string }[]).filter((e) => e.type.startsWith('watch.'))).toEqual([]);
    expect((theirs.body.items as { type: string }[]).filter((e) => e.type.startsWith('listing.'))).toEqual(
      [],
    );
    // Give a second delivery every chance to show up before asserting there is none.
    await list(9103, 3, '1');
    await waitUntil(() => receiver.received.length >= 2, 10_000);
    expect(receiver.received.every((r) => r.headers['webhook-id'] !== undefined)).toBe(true);
    expect(receiver.received.map((r) => r.id)).toHaveLength(2);
    expect(receiver.received.filter((r) => r.body.includes('"ticket_id":"2"'))).toHaveLength(1);
    const shown = await request(server)
      .get(`/v1/watches/${watch.body.id as string}`)
      .set(bearer(client.key));
    expect(shown.body.last_alerted_at).not.toBeNull();
  });
});
