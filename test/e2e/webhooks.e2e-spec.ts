import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OutboxPruner } from '../../src/webhooks/outbox.pruner';
import type { NewEvent } from '../../src/webhooks/webhook-events';
import { appendEvents, appendStatement } from '../support/outbox-events';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

const ENV = {
  WEBHOOKS_WORKER_INTERVAL_MS: '100',
  WEBHOOKS_DELIVERY_TIMEOUT_MS: '2000',
  WEBHOOKS_LEASE_MS: '3000',
  WEBHOOKS_DISABLE_AFTER_HOURS: '24',
  RATE_LIMIT_DEFAULT: '100000',
};

interface Endpoint {
  id: string;
  secret?: string;
  enabled: boolean;
  disabled_reason: string | null;
  event_types: string[];
}
interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
}
interface Feed {
  items: { id: string; type: string; version: number; occurred_at: string; data: Record<string, unknown> }[];
  next_cursor: string | null;
  has_more: boolean;
}

const arrivedOf = (r: WebhookReceiver, id: string) => r.received.filter((x) => x.id === id);

const fieldsOf = (res: request.Response): string[] =>
  (res.body.error.details as { field: string }[]).map((d) => d.field);

const confirmed = (clientId: string, order: string): NewEvent => ({
  type: 'order.confirmed',
  clientId,
  data: {
    order_id: order,
    state: 'confirmed',
    attempt: 1,
    event_id: '7000001',
    ticket_id: '42',
    price_minor: '18446744073709551615',
    failure: null,
    transaction_signature: `sig-${order}`,
  },
});

describe('Webhooks (e2e: endpoints, signed deliveries to a loopback receiver, the catch-up feed)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let alice: TestClient;
  let bob: TestClient;
  let admin: TestClient;
  let reader: TestClient;
  /** Receives the deliveries of the `delivery` tests' endpoint only. */
  let receiver: WebhookReceiver;
  let bobReceiver: WebhookReceiver;
  /** Where the endpoints of the API tests point (never pinged). */
  let spare: WebhookReceiver;
  let dataSource: DataSource;
  const secrets: string[] = [];

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    alice = await issueTestKey(t.app, ['webhooks:write']);
    bob = await issueTestKey(t.app, ['webhooks:write']);
    admin = await issueTestKey(t.app, ['admin']);
    reader = await issueTestKey(t.app, ['catalog:read']);
    receiver = await WebhookReceiver.start();
    bobReceiver = await WebhookReceiver.start();
    spare = await WebhookReceiver.start();
  });
  afterEach(() => {
    receiver.answer = () => 200;
    bobReceiver.answer = () => 200;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await bobReceiver?.close();
    await spare?.close();
  });

  const register = async (client: TestClient, body: Record<string, unknown>): Promise<Endpoint> => {
    const res = await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send(body)
      .expect(201);
    const endpoint = res.body as Endpoint;
    if (endpoint.secret) secrets.push(endpoint.secret);
    return endpoint;
  };
  const append = (events: NewEvent[]): Promise<string[]> =>
    dataSource.transaction((manager) => appendEvents(manager, events));
  /** The ids of `events` now, and a commit of their append for later (a receiver can be told about them first). */
  const prepare = (events: NewEvent[]): { ids: string[]; commit: () => Promise<unknown> } => {
    const { statement, ids } = appendStatement(events);
    return { ids, commit: () => dataSource.query(statement.text, statement.values) };
  };
  const deliveries = async (client: TestClient, endpointId: string): Promise<Delivery[]> =>
    (
      await request(server)
        .get(`/v1/webhooks/endpoints/${endpointId}/deliveries?limit=100`)
        .set(bearer(client.key))
        .expect(200)
    ).body.items as Delivery[];
  const feed = async (client: TestClient, after?: string): Promise<Feed> =>
    (
      await request(server)
        .get('/v1/notifications')
        .query(after ? { after, limit: 100 } : { limit: 100 })
        .set(bearer(client.key))
        .expect(200)
    ).body as Feed;

  describe('endpoints API', () => {
    it('registers an endpoint: the secret is in the 201 only, never in a GET or a list', async () => {
      const created = await register(alice, { url: spare.url, description: 'orders', event_types: [] });

      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const one = await request(server)
        .get(`/v1/webhooks/endpoints/${created.id}`)
        .set(bearer(alice.key))
        .expect(200);
      const list = await request(server).get('/v1/webhooks/endpoints').set(bearer(alice.key)).expect(200);
      expect(JSON.stringify(one.body)).not.toContain('whsec_');
      expect(JSON.stringify(list.body)).not.toContain('whsec_');
      expect((list.body.items as Endpoint[]).map((e) => e.id)).toContain(created.id);
    });

    it.each([
      [{ url: 'http://example.com/hooks' }, 'url'],
      [{ url: 'https://169.254.169.254/latest/meta-data/' }, 'url'],
      [{ url: 'http://[fe80::1]:80/' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 42 }, 'url'],
      [{}, 'url'],
      [{ url: 'https://hooks.example.com/', event_types: ['order.nope'] }, 'event_types'],
      [{ url: 'https://hooks.example.com/', event_types: ['sync.pass_completed'] }, 'event_types'],
      [{ url: 'https://hooks.example.com/', enabled: 'yes' }, 'enabled'],
      [{ url: 'https://hooks.example.com/', secret: 'whsec_mine' }, 'secret'],
    ])('refuses %j with a 400 naming %s', async (body, field) => {
      const res = await request(server)
        .post('/v1/webhooks/endpoints')
        .set(bearer(alice.key))
        .send(body)
        .expect(400);

      expect(fieldsOf(res)).toEqual([field]);
    });

    it('needs webhooks:write (admin implies it); another client gets 404 for every route of an endpoint', async () => {
      const endpoint = await register(alice, { url: spare.url });
      await request(server).get('/v1/webhooks/endpoints').set(bearer(reader.key)).expect(403);
      await request(server).get('/v1/webhooks/endpoints').set(bearer(admin.key)).expect(200);

      const path = `/v1/webhooks/endpoints/${endpoint.id}`;
      await request(server).get(path).set(bearer(bob.key)).expect(404);
      await request(server).patch(path).set(bearer(bob.key)).send({ enabled: false }).expect(404);
      await request(server).post(`${path}/rotate-secret`).set(bearer(bob.key)).expect(404);
      await request(server).post(`${path}/ping`).set(bearer(bob.key)).expect(404);
      await request(server).get(`${path}/deliveries`).set(bearer(bob.key)).expect(404);
      await request(server).delete(path).set(bearer(bob.key)).expect(404);
      await request(server).get('/v1/webhooks/endpoints/not-a-uuid').set(bearer(alice.key)).expect(404);
      const own = await request(server).get(path).set(bearer(alice.key)).expect(200);
      expect(own.body).toMatchObject({ id: endpoint.id, url: spare.url, enabled: true });
    });
  });

  describe('delivery', () => {
    let endpoint: Endpoint;

    beforeAll(async () => {
      endpoint = await register(alice, {
        url: receiver.url,
        event_types: ['order.confirmed', 'order.failed'],
      });
      await register(bob, { url: bobReceiver.url });
    });

    it('a ping arrives signed: the standardwebhooks package verifies it with the secret', async () => {
      const res = await request(server)
        .post(`/v1/webhooks/endpoints/${endpoint.id}/ping`)
        .set(bearer(alice.key))
        .expect(202);
      const { event_id: eventId } = res.body as { event_id: string };

      await waitUntil(() => arrivedOf(receiver, eventId).length === 1, 10_000);
      const [arrived] = arrivedOf(receiver, eventId);
      const verified = new Webhook(endpoint.secret ?? '').verify(
        arrived?.body ?? '',
        arrived?.headers as Record<string, string>,
      );
      expect(verified).toMatchObject({
        id: eventId,
        type: 'webhook.ping',
        version: 1,
        data: { endpoint_id: endpoint.id },
      });
      expect(arrived?.headers['content-type']).toBe('application/json');
    });

    it("appended events reach the owner's matching endpoint and feed, with the same ids and payloads; never another client's", async () => {
      const ids = await append([
        confirmed(alice.id, 'a-1'),
        {
          type: 'order.created',
          clientId: alice.id,
          data: {
            order_id: 'a-1',
            state: 'created',
            buyer_subject: 'x',
            event_id: '1',
            ticket_id: '2',
            expected_price_minor: '3',
          },
        },
        confirmed(bob.id, 'b-1'),
      ]);
      const [aliceConfirmed, aliceCreated, bobConfirmed] = ids as [string, string, string];

      await waitUntil(
        () =>
          arrivedOf(receiver, aliceConfirmed).length === 1 &&
          arrivedOf(bobReceiver, bobConfirmed).length === 1,
        10_000,
      );
      const body = JSON.parse(arrivedOf(receiver, aliceConfirmed)[0]?.body ?? '{}') as Feed['items'][number];
      expect(body).toMatchObject({ id: aliceConfirmed, type: 'order.confirmed', version: 1 });
      expect(body.data.price_minor).toBe('18446744073709551615');
      // The endpoint filters on order.confirmed / order.failed: no order.created.
      expect(arrivedOf(receiver, aliceCreated)).toEqual([]);
      expect(receiver.ids()).not.toContain(bobConfirmed);
      expect(bobReceiver.ids()).not.toContain(aliceConfirmed);

      await waitUntil(async () => (await feed(alice)).items.some((i) => i.id === aliceCreated), 10_000);
      const aliceFeed = await feed(alice);
      expect(aliceFeed.items.find((i) => i.id === aliceConfirmed)).toEqual(body);
      expect(aliceFeed.items.map((i) => i.id)).not.toContain(bobConfirmed);
      expect((await feed(bob)).items.map((i) => i.id)).not.toContain(aliceConfirmed);
    });

    it('a receiver down then back gets the event at the next scheduled try (5 s), same webhook-id', async () => {
      const { ids, commit } = prepare([confirmed(alice.id, 'down-1')]);
      const [id] = ids;
      // Down for the first try of this event, back for the next.
      receiver.answer = (r) => (r.id === id && arrivedOf(receiver, r.id).length === 1 ? 503 : 200);
      await commit();

      await waitUntil(() => arrivedOf(receiver, id ?? '').length === 1, 10_000);
      const afterFirst = (await deliveries(alice, endpoint.id)).find((d) => d.event_id === id);
      expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });

      await waitUntil(() => arrivedOf(receiver, id ?? '').length === 2, 15_000);
      const [first, second] = arrivedOf(receiver, id ?? '');
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(4_400);
      await waitUntil(
        async () =>
          (await deliveries(alice, endpoint.id)).find((d) => d.event_id === id)?.status === 'delivered',
        5_000,
      );
    }, 40_000);

    it('never follows a redirect: a 302 is a failed try and its Location gets nothing', async () => {
      const { ids, commit } = prepare([confirmed(alice.id, 'redirect-1')]);
      const [redirected] = ids;
      receiver.answer = (r) =>
        r.id === redirected ? { status: 302, headers: { location: bobReceiver.url } } : 200;
      const before = bobReceiver.received.length;
      await commit();

      await waitUntil(
        async () =>
          (await deliveries(alice, endpoint.id)).find((d) => d.event_id === redirected)?.last_status_code ===
          302,
        10_000,
      );
      const delivery = (await deliveries(alice, endpoint.id)).find((d) => d.event_id === redirected);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
      expect(delivery?.last_error).toMatch(/redirects are not followed/);
      expect(bobReceiver.received.length).toBe(before);
    });

    it('a delivery whose sender died mid-send (its lease held by a dead replica) is sent once the lease expires, same id', async () => {
      const [id] = await dataSource.transaction(async (manager) => {
        const appended = await appendEvents(manager, [confirmed(alice.id, 'crash-1')]);
        // A replica claimed it and died before recording anything: its lease runs 1.5 s more.
        await manager.query(
          `UPDATE webhook_deliveries SET lease_owner = 'dead-replica', lease_until = clock_timestamp() + interval '1.5 s',
             lease_token = nextval('durable_work_token_seq'), attempts = 1 WHERE event_id = $1`,
          appended,
        );
        return appended;
      });

      await new Promise((r) => setTimeout(r, 800));
      expect(arrivedOf(receiver, id ?? '')).toEqual([]);
      await waitUntil(() => arrivedOf(receiver, id ?? '').length === 1, 10_000);
      await waitUntil(
        async () =>
          (await deliveries(alice, endpoint.id)).find((d) => d.event_id === id)?.status === 'delivered',
        5_000,
      );
      expect((await deliveries(alice, endpoint.id)).find((d) => d.event_id === id)?.attempts).toBe(2);
      expect(t.logs.text).toContain('dead-replica');
    });

    it('a manual retry sends a delivered event again with the same webhook-id', async () => {
      const [id] = await append([confirmed(alice.id, 'retry-1')]);
      await waitUntil(
        async () =>
          (await deliveries(alice, endpoint.id)).find((d) => d.event_id === id)?.status === 'delivered',
        10_000,
      );
      const delivery = (await deliveries(alice, endpoint.id)).find((d) => d.event_id === id);

      await request(server)
        .post(`/v1/webhooks/endpoints/${endpoint.id}/deliveries/${delivery?.id}/retry`)
        .set(bearer(alice.key))
        .expect(202);

      await waitUntil(() => arrivedOf(receiver, id ?? '').length === 2, 10_000);
      expect(arrivedOf(receiver, id ?? '').map((r) => r.headers['webhook-id'])).toEqual([id, id]);
      await request(server)
        .post(`/v1/webhooks/endpoints/${endpoint.id}/deliveries/${delivery?.id}/retry`)
        .set(bearer(bob.key))
        .expect(404);
    });

    it('a rotated secret: both signatures verify during the grace period; GET shows when the old one expires', async () => {
      const before = endpoint.secret ?? '';
      const res = await request(server)
        .post(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`)
        .set(bearer(alice.key))
        .expect(200);
      const rotated = res.body as Endpoint & { previous_secret_expires_at: string };
      secrets.push(rotated.secret ?? '');
      expect(rotated.secret).not.toBe(before);
      expect(Date.parse(rotated.previous_secret_expires_at)).toBeGreaterThan(Date.now());

      const [id] = await append([confirmed(alice.id, 'rotated-1')]);
      await waitUntil(() => arrivedOf(receiver, id ?? '').length === 1, 10_000);
      const [arrived] = arrivedOf(receiver, id ?? '');
      const headers = arrived?.headers as Record<string, string>;
      expect(new Webhook(rotated.secret ?? '').verify(arrived?.body ?? '', headers)).toMatchObject({ id });
      expect(new Webhook(before).verify(arrived?.body ?? '', headers)).toMatchObject({ id });
      endpoint.secret = rotated.secret;
    });

    it('operator events reach admin endpoints and feeds only', async () => {
      const adminReceiver = await WebhookReceiver.start();
      try {
        await register(admin, { url: adminReceiver.url });
        const [id] = await append([
          {
            type: 'sync.pass_completed',
            clientId: null,
            data: { pass_id: 'p', resource: 'listings', scope: 'all', items: 1, upserted: 1, removed: 0 },
          },
        ]);

        await waitUntil(() => adminReceiver.ids().includes(id ?? ''), 10_000);
        await waitUntil(async () => (await feed(admin)).items.some((i) => i.id === id), 10_000);
        expect(receiver.ids()).not.toContain(id);
        expect(bobReceiver.ids()).not.toContain(id);
        expect((await feed(alice)).items.map((i) => i.id)).not.toContain(id);
      } finally {
        await adminReceiver.close();
      }
    });

    it('disables an endpoint failing for longer than WEBHOOKS_DISABLE_AFTER_HOURS, and says why', async () => {
      const failing = await register(bob, { url: bobReceiver.url });
      bobReceiver.answer = () => 500;
      await dataSource.query(
        `UPDATE webhook_endpoints SET failing_since = clock_timestamp() - interval '25 hours' WHERE id = $1`,
        [failing.id],
      );
      await request(server)
        .post(`/v1/webhooks/endpoints/${failing.id}/ping`)
        .set(bearer(bob.key))
        .expect(202);

      await waitUntil(
        async () =>
          !(
            (await request(server).get(`/v1/webhooks/endpoints/${failing.id}`).set(bearer(bob.key)))
              .body as Endpoint
          ).enabled,
        10_000,
      );
      const disabled = (
        await request(server).get(`/v1/webhooks/endpoints/${failing.id}`).set(bearer(bob.key))
      ).body as Endpoint;
      expect(disabled.disabled_reason).toMatch(
        /every delivery failed since .* \(more than 24 h\); last: HTTP 500/,
      );
      await request(server)
        .post(`/v1/webhooks/endpoints/${failing.id}/ping`)
        .set(bearer(bob.key))
        .expect(409);
      const enabled = await request(server)
        .patch(`/v1/webhooks/endpoints/${failing.id}`)
        .set(bearer(bob.key))
        .send({ enabled: true })
        .expect(200);
      expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      await request(server).delete(`/v1/webhooks/endpoints/${failing.id}`).set(bearer(bob.key)).expect(204);
      await request(server).get(`/v1/webhooks/endpoints/${failing.id}`).set(bearer(bob.key)).expect(404);
    });

    it('counts tries by outcome and reports the oldest undelivered event per endpoint', async () => {
      const metrics = (await request(server).get('/metrics').expect(200)).text;

      expect(metrics).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
      expect(metrics).toMatch(/webhook_deliveries_total\{outcome="retry"\} [1-9]/);
      expect(metrics).toMatch(/webhook_delivery_duration_seconds_bucket/);
      expect(metrics).toContain('# TYPE webhook_oldest_undelivered_age_seconds gauge');
    });
  });

  describe('feed', () => {
    it('pages in order by cursor; a foreign, tampered or malformed cursor is a 400 naming after', async () => {
      const ids = await append([1, 2, 3, 4, 5].map((n) => confirmed(alice.id, `page-${n}`)));
      await waitUntil(async () => (await feed(alice)).items.some((i) => i.id === ids[4]), 10_000);

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await request(server)
          .get('/v1/notifications')
          .query({ limit: 2, ...(cursor ? { after: cursor } : {}) })
          .set(bearer(alice.key))
          .expect(200);
        const body = res.body as Feed;
        seen.push(...body.items.map((i) => i.id));
        if (!body.has_more) break;
        cursor = body.next_cursor ?? undefined;
      }
      expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
      expect(new Set(seen).size).toBe(seen.length);

      const mine = (await feed(alice)).next_cursor ?? '';
      for (const after of [mine, `${mine.slice(0, -2)}xx`, 'garbage']) {
        const client = after === mine ? bob : alice;
        const res = await request(server)
          .get('/v1/notifications')
          .query({ after })
          .set(bearer(client.key))
          .expect(400);
        expect(fieldsOf(res)).toEqual(['after']);
      }
      await request(server).get('/v1/notifications').query({ limit: 501 }).expect(401);
      const tooMany = await request(server)
        .get('/v1/notifications')
        .query({ limit: 501 })
        .set(bearer(alice.key))
        .expect(400);
      expect(fieldsOf(tooMany)).toEqual(['limit']);
    });

    it('answers 410 with the oldest cursor for a cursor past the retention, and that cursor resumes', async () => {
      const old = await append([confirmed(alice.id, 'old-1'), confirmed(alice.id, 'old-2')]);
      const kept = await append([confirmed(alice.id, 'kept-1')]);
      await waitUntil(async () => (await feed(alice)).items.some((i) => i.id === kept[0]), 10_000);
      const all = await feed(alice);
      const index = all.items.findIndex((i) => i.id === old[0]);
      // A cursor at the first old event (as a consumer that read up to it holds).
      const page = await request(server)
        .get('/v1/notifications')
        .query({ limit: index + 1 })
        .set(bearer(alice.key))
        .expect(200);
      const staleCursor = (page.body as Feed).next_cursor ?? '';
      await dataSource.query(
        `UPDATE outbox_events SET occurred_at = clock_timestamp() - interval '31 days' WHERE xact_id <= (SELECT xact_id FROM outbox_events WHERE id = $1)`,
        [old[1]],
      );

      expect(await t.app.get(OutboxPruner).prune()).toBeGreaterThan(0);

      const gone = await request(server)
        .get('/v1/notifications')
        .query({ after: staleCursor })
        .set(bearer(alice.key))
        .expect(410);
      expect(gone.body.error.code).toBe('GONE');
      const oldest = gone.body.error.details.oldest_cursor as string;
      const resumed = await request(server)
        .get('/v1/notifications')
        .query({ after: oldest, limit: 500 })
        .set(bearer(alice.key))
        .expect(200);
      expect((resumed.body as Feed).items.map((i) => i.id)).toContain(kept[0]);
      expect((resumed.body as Feed).items.map((i) => i.id)).not.toContain(old[1]);
    });
  });

  it('never logs a secret or a payload', () => {
    expect(secrets.length).toBeGreaterThan(2);
    for (const secret of secrets) {
      expect(t.logs.text).not.toContain(secret);
      expect(t.logs.text).not.toContain(secret.slice(6));
    }
    expect(t.logs.text).not.toContain('18446744073709551615');
    expect(t.logs.text).toContain('webhook try');
  });
});
