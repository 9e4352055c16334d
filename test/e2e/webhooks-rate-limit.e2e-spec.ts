import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/webhooks/webhook-events';
import { appendEvents } from '../support/outbox-events';
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

interface Endpoint {
  id: string;
  secret?: string;
  rate_limit: number | null;
}

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
    price_minor: '1000',
    failure: null,
    transaction_signature: `sig-${order}`,
  },
});

/** The webhook-ids the receiver got, each verified with `secret` (throws on a bad signature). */
const verifiedIds = (receiver: WebhookReceiver, secret: string): string[] =>
  receiver.received.map(
    (r) => (new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string }).id,
  );

describe('Webhooks rate_limit (e2e: messages per second per endpoint, paced on the database clock)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let limited: TestClient;
  let free: TestClient;
  let other: TestClient;
  let limitedReceiver: WebhookReceiver;
  let freeReceiver: WebhookReceiver;
  let spare: WebhookReceiver;
  let dataSource: DataSource;

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    limited = await issueTestKey(t.app, ['webhooks:write']);
    free = await issueTestKey(t.app, ['webhooks:write']);
    other = await issueTestKey(t.app, ['webhooks:write']);
    limitedReceiver = await WebhookReceiver.start();
    freeReceiver = await WebhookReceiver.start();
    spare = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await t?.close();
    await limitedReceiver?.close();
    await freeReceiver?.close();
    await spare?.close();
  });

  const register = async (client: TestClient, body: Record<string, unknown>): Promise<Endpoint> =>
    (await request(server).post('/v1/webhooks/endpoints').set(bearer(client.key)).send(body).expect(201))
      .body as Endpoint;
  const append = (events: NewEvent[]): Promise<string[]> =>
    dataSource.transaction((manager) => appendEvents(manager, events));

  it('rate_limit 2: 6 events all arrive signed, paced (the last >= 2.5 s after they exist), each in one attempt', async () => {
    const endpoint = await register(limited, { url: limitedReceiver.url, rate_limit: 2 });
    expect(endpoint.rate_limit).toBe(2);
    const appendedAt = Date.now();
    const ids = await append(Array.from({ length: 6 }, (_, i) => confirmed(limited.id, `rl-${i}`)));

    await waitUntil(() => limitedReceiver.received.length >= 6, 15_000);
    expect(verifiedIds(limitedReceiver, endpoint.secret ?? '').sort()).toEqual([...ids].sort());
    const times = limitedReceiver.received.map((r) => r.at);
    // Six sends 500 ms apart: the last no earlier than 2.5 s after the events existed (a late send only moves it
    // later), and spread out rather than sent together (a stalled first send may shorten the spread, so the
    // spread's bound leaves a second for that).
    expect(Math.max(...times) - appendedAt).toBeGreaterThanOrEqual(2500);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1500);
    const log = await request(server)
      .get(`/v1/webhooks/endpoints/${endpoint.id}/deliveries?limit=100`)
      .set(bearer(limited.key))
      .expect(200);
    const items = log.body.items as { status: string; attempts: number; last_error: string | null }[];
    expect(items).toHaveLength(6);
    for (const d of items) expect(d).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
  });

  it('no rate_limit: 6 events all arrive signed, sooner than the paced 2.5 s', async () => {
    const endpoint = await register(free, { url: freeReceiver.url });
    expect(endpoint.rate_limit).toBeNull();
    const ids = await append(Array.from({ length: 6 }, (_, i) => confirmed(free.id, `fr-${i}`)));

    await waitUntil(() => freeReceiver.received.length >= 6, 15_000);
    expect(verifiedIds(freeReceiver, endpoint.secret ?? '').sort()).toEqual([...ids].sort());
    const times = freeReceiver.received.map((r) => r.at);
    // Within about a second on a quiet machine; the bound is below the 2.5 s that pacing at 2/s would take.
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(2300);
  });

  it.each([[0], [1001], [1.5], ['x']])(
    'rate_limit %j is a 400 naming rate_limit (create and PATCH)',
    async (value) => {
      const created = await request(server)
        .post('/v1/webhooks/endpoints')
        .set(bearer(other.key))
        .send({ url: spare.url, rate_limit: value })
        .expect(400);
      expect(fieldsOf(created)).toEqual(['rate_limit']);
      const endpoint = await register(other, { url: spare.url });
      const patched = await request(server)
        .patch(`/v1/webhooks/endpoints/${endpoint.id}`)
        .set(bearer(other.key))
        .send({ rate_limit: value })
        .expect(400);
      expect(fieldsOf(patched)).toEqual(['rate_limit']);
      await request(server)
        .delete(`/v1/webhooks/endpoints/${endpoint.id}`)
        .set(bearer(other.key))
        .expect(204);
    },
  );

  it('GET and the list show rate_limit; PATCH sets it, PATCH null removes it, a PATCH without it keeps it', async () => {
    const endpoint = await register(other, { url: spare.url, rate_limit: 1000 });
    const path = `/v1/webhooks/endpoints/${endpoint.id}`;
    const got = await request(server).get(path).set(bearer(other.key)).expect(200);
    expect(got.body).toMatchObject({ id: endpoint.id, rate_limit: 1000 });
    const list = await request(server).get('/v1/webhooks/endpoints').set(bearer(other.key)).expect(200);
    expect((list.body.items as Endpoint[]).find((e) => e.id === endpoint.id)?.rate_limit).toBe(1000);

    const set = await request(server).patch(path).set(bearer(other.key)).send({ rate_limit: 5 }).expect(200);
    expect(set.body).toMatchObject({ rate_limit: 5 });
    const kept = await request(server)
      .patch(path)
      .set(bearer(other.key))
      .send({ description: 'kept' })
      .expect(200);
    expect(kept.body).toMatchObject({ rate_limit: 5, description: 'kept' });
    const removed = await request(server)
      .patch(path)
      .set(bearer(other.key))
      .send({ rate_limit: null })
      .expect(200);
    expect(removed.body).toMatchObject({ rate_limit: null });
    expect((await request(server).get(path).set(bearer(other.key)).expect(200)).body).toMatchObject({
      rate_limit: null,
    });
  });
});
