import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

const ENV = {
  WEBHOOKS_WORKER_INTERVAL_MS: '100',
  WEBHOOKS_DELIVERY_TIMEOUT_MS: '2000',
  WEBHOOKS_LEASE_MS: '3000',
  RATE_LIMIT_DEFAULT: '100000',
};

interface Envelope {
  id: string;
  type: string;
  version: number;
  data: Record<string, unknown>;
}

const bodies = (r: WebhookReceiver): Envelope[] => r.received.map((x) => JSON.parse(x.body) as Envelope);

/**
 * Issue 31 item 10 (endpoint health as Svix does it): `endpoint.disabled` is announced, in the statement that
 * disables an endpoint, to the client's feed and its other enabled endpoints, never to the disabled one.
 */
describe('Webhook endpoint health (e2e: endpoint.disabled)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let dataSource: DataSource;
  let admin: TestClient;
  let receiver: WebhookReceiver;
  let disabledReceiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    admin = await issueTestKey(t.app, ['admin']);
    receiver = await WebhookReceiver.start();
    disabledReceiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await disabledReceiver?.close();
  });

  const feedOf = async (key: string): Promise<Envelope[]> =>
    (await request(server).get('/v1/notifications?limit=100').set(bearer(key)).expect(200)).body
      .items as Envelope[];

  it('PATCH enabled=false: endpoint.disabled reaches the other endpoint and the feed, not the disabled one; url is the origin only', async () => {
    const client = await issueTestKey(t.app, ['webhooks:write']);
    const create = async (url: string, eventTypes?: string[]): Promise<string> =>
      (
        await request(server)
          .post('/v1/webhooks/endpoints')
          .set(bearer(client.key))
          .send({ url, ...(eventTypes ? { event_types: eventTypes } : {}) })
          .expect(201)
      ).body.id as string;
    const watching = await create(`${receiver.url}/all`);
    // An endpoint filtered to other types does not get it.
    await create(`${receiver.url}/orders-only`, ['order.created']);
    const target = await create(`${disabledReceiver.url}/hook/secret-token?token=abc`);

    await request(server)
      .patch(`/v1/webhooks/endpoints/${target}`)
      .set(bearer(client.key))
      .send({ enabled: false })
      .expect(200);

    await waitUntil(async () => bodies(receiver).some((b) => b.type === 'endpoint.disabled'), 10_000);
    const sent = bodies(receiver).filter((b) => b.type === 'endpoint.disabled');
    expect(sent).toHaveLength(1);
    expect(receiver.received.find((r) => r.id === sent[0].id)).toBeDefined();
    expect(sent[0]).toMatchObject({
      type: 'endpoint.disabled',
      version: 1,
      data: {
        endpoint_id: target,
        url: `http://127.0.0.1:${disabledReceiver.port}`,
        reason: 'manual',
        detail: 'disabled by the client',
        disabled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string,
      },
    });
    expect(JSON.stringify(sent[0])).not.toContain('secret-token');
    // The feed shows an event once every transaction older than it has ended, cluster-wide (outbox.repository.ts):
    // the webhook can arrive before that, so the feed is read until it shows the event (bounded).
    let feed: Envelope[] = [];
    await waitUntil(async () => {
      feed = (await feedOf(client.key)).filter((e) => e.type === 'endpoint.disabled');
      return feed.length > 0;
    }, 15_000);
    expect(feed).toEqual(sent);
    const [deliveries] = await dataSource.query<{ watching: number; target: number; total: number }[]>(
      `SELECT count(*) FILTER (WHERE d.endpoint_id = $2)::int AS watching,
              count(*) FILTER (WHERE d.endpoint_id = $3)::int AS target, count(*)::int AS total
       FROM webhook_deliveries d WHERE d.event_id = $1`,
      [sent[0].id, watching, target],
    );
    expect(deliveries).toEqual({ watching: 1, target: 0, total: 1 });
    expect(disabledReceiver.received).toEqual([]);
    // Disabling an endpoint that is already disabled announces nothing more.
    await request(server)
      .patch(`/v1/webhooks/endpoints/${target}`)
      .set(bearer(client.key))
      .send({ enabled: false })
      .expect(200);
    expect((await feedOf(client.key)).filter((e) => e.type === 'endpoint.disabled')).toHaveLength(1);
  });

  it('a revoked key: one endpoint.disabled per endpoint (reason key_revoked), in its feed only', async () => {
    const issued = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'health-revoked', scopes: ['webhooks:write'] })
      .expect(201);
    const key = issued.body.key as string;
    const ids: string[] = [];
    for (const path of ['a', 'b'])
      ids.push(
        (
          await request(server)
            .post('/v1/webhooks/endpoints')
            .set(bearer(key))
            .send({ url: `${receiver.url}/${path}` })
            .expect(201)
        ).body.id as string,
      );
    await request(server)
      .delete(`/v1/admin/api-clients/${issued.body.id}`)
      .set(bearer(admin.key))
      .expect(200);

    const events = await dataSource.query<{ id: string; payload: Record<string, unknown> }[]>(
      `SELECT id, payload FROM outbox_events WHERE type = 'endpoint.disabled' AND client_id = $1`,
      [issued.body.id],
    );
    expect(events.map((e) => String(e.payload.endpoint_id)).sort((a, b) => a.localeCompare(b))).toEqual(
      [...ids].sort((a, b) => a.localeCompare(b)),
    );
    for (const e of events) expect(e.payload.reason).toBe('key_revoked');
    // Both endpoints were disabled by the same statement: neither gets the other's event.
    const [row] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY ($1::text[])`,
      [events.map((e) => e.id)],
    );
    expect(row.n).toBe(0);
  });

  it('failing for WEBHOOKS_DISABLE_AFTER_HOURS: endpoint.disabled with reason automatic', async () => {
    const client = await issueTestKey(t.app, ['webhooks:write']);
    const endpoint = await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send({ url: `${disabledReceiver.url}/failing` })
      .expect(201);
    // The worker's own disabling statement sets these together (WebhookDeliveryRepository); the trigger reads them.
    await dataSource.query(
      `UPDATE webhook_endpoints SET enabled = false, disabled_at = clock_timestamp(),
         disabled_reason = 'every delivery failed since 2026-11-27T00:00:00Z' WHERE id = $1`,
      [endpoint.body.id],
    );
    // The feed shows an event once every transaction older than it has ended, cluster-wide
    // (outbox.repository.ts): under a parallel suite another database's long transaction can delay it a moment.
    let feed: Envelope[] = [];
    await waitUntil(async () => {
      feed = (await feedOf(client.key)).filter((e) => e.type === 'endpoint.disabled');
      return feed.length > 0;
    }, 15_000);
    expect(feed).toHaveLength(1);
    expect(feed[0].data).toMatchObject({ endpoint_id: endpoint.body.id, reason: 'automatic' });
  });
});
