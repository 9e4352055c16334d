import { Webhook } from 'standardwebhooks';
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
  WEBHOOKS_MANUAL_SENDS_PER_MINUTE: '1000',
  RATE_LIMIT_DEFAULT: '100000',
};

const fieldsOf = (res: request.Response): string[] =>
  (res.body.error.details as { field: string }[]).map((d) => d.field);

/**
 * Issue 31 item 10 (endpoint health as Svix does it): `POST /v1/webhooks/endpoints/{id}/recover` with `since` sends
 * again every failed (given-up) delivery of that endpoint created since then.
 */
describe('Webhook endpoint recover (e2e)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let dataSource: DataSource;
  let client: TestClient;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(ENV);
    server = t.app.getHttpServer();
    dataSource = t.app.get(DataSource);
    client = await issueTestKey(t.app, ['webhooks:write']);
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const createEndpoint = async (path: string): Promise<{ id: string; secret: string }> =>
    (
      await request(server)
        .post('/v1/webhooks/endpoints')
        .set(bearer(client.key))
        .send({ url: `${receiver.url}/${path}` })
        .expect(201)
    ).body as { id: string; secret: string };

  const ping = async (endpointId: string): Promise<{ event_id: string; delivery_id: string }> =>
    (
      await request(server)
        .post(`/v1/webhooks/endpoints/${endpointId}/ping`)
        .set(bearer(client.key))
        .expect(202)
    ).body as { event_id: string; delivery_id: string };

  const statusOf = async (deliveryIds: string[]): Promise<string[]> =>
    (
      await dataSource.query<{ status: string }[]>(
        `SELECT status FROM webhook_deliveries WHERE id = ANY ($1::uuid[]) ORDER BY id`,
        [deliveryIds],
      )
    ).map((r) => r.status);

  /**
   * The worker gives these deliveries up: once a try has failed, each is moved to the last try of the schedule
   * (attempts 7, due now), and the worker's 8th try fails it like any other delivery at the end of its schedule.
   */
  const givenUp = async (deliveryIds: string[]): Promise<void> => {
    await waitUntil(async () => {
      await dataSource.query(
        `UPDATE webhook_deliveries SET attempts = 7, next_attempt_at = clock_timestamp()
         WHERE id = ANY ($1::uuid[]) AND status = 'pending' AND attempts BETWEEN 1 AND 6
           AND (lease_until IS NULL OR lease_until < clock_timestamp())`,
        [deliveryIds],
      );
      return (await statusOf(deliveryIds)).every((s) => s === 'failed');
    }, 15_000);
  };

  it('dead receiver, given up, fixed: recover since T re-queues exactly the failed deliveries after T, which arrive signed', async () => {
    receiver.answer = () => 500;
    const endpoint = await createEndpoint('recover');
    const before = [await ping(endpoint.id), await ping(endpoint.id)];
    await givenUp(before.map((p) => p.delivery_id));

    const [{ t: since }] = await dataSource.query<{ t: string }[]>(
      `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t`,
    );
    const after = [await ping(endpoint.id), await ping(endpoint.id), await ping(endpoint.id)];
    await givenUp(after.map((p) => p.delivery_id));
    const afterIds = new Set(after.map((p) => p.event_id));
    const triesBefore = receiver.received.length;

    receiver.answer = () => 200;
    const res = await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(client.key))
      .send({ since })
      .expect(202);
    expect(res.body).toEqual({ requeued: 3 });

    await waitUntil(
      async () => (await statusOf(after.map((p) => p.delivery_id))).every((s) => s === 'delivered'),
      10_000,
    );
    const resent = receiver.received.slice(triesBefore);
    expect(resent.map((r) => r.id).sort((a, b) => a.localeCompare(b))).toEqual(
      [...afterIds].sort((a, b) => a.localeCompare(b)),
    );
    for (const arrived of resent)
      expect(
        new Webhook(endpoint.secret).verify(arrived.body, arrived.headers as Record<string, string>),
      ).toMatchObject({ id: arrived.id, type: 'webhook.ping' });
    // The deliveries from before T stay given up.
    expect(await statusOf(before.map((p) => p.delivery_id))).toEqual(['failed', 'failed']);

    // Nothing failed since T any more: a second recover finds nothing.
    const again = await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(client.key))
      .send({ since })
      .expect(202);
    expect(again.body).toEqual({ requeued: 0 });
  });

  it.each([
    [{}, 'missing'],
    [{ since: 'yesterday' }, 'not a date-time'],
    [{ since: '2027-01-01' }, 'a date without a time'],
    [{ since: 12 }, 'a number'],
    [{ since: '2026-02-30T00:00:00Z' }, 'a day that does not exist'],
    [{ since: '2026-06-30T23:59:60Z' }, 'a leap second'],
    [{ since: new Date(Date.now() + 3_600_000).toISOString() }, 'in the future'],
    [{ since: new Date(Date.now() - 31 * 86_400_000).toISOString() }, 'older than the retention (30 days)'],
  ])('refuses since %j (%s) with a 400 naming since', async (body, _why) => {
    const endpoint = await createEndpoint('recover-400');
    const res = await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(client.key))
      .send(body)
      .expect(400);
    expect(fieldsOf(res)).toEqual(['since']);
  });

  it("recover: another client's endpoint is 404, a disabled endpoint 409, a key without webhooks:write 403", async () => {
    const endpoint = await createEndpoint('recover-guards');
    const since = new Date(Date.now() - 60_000).toISOString();
    const other = await issueTestKey(t.app, ['webhooks:write']);
    await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(other.key))
      .send({ since })
      .expect(404);
    const reader = await issueTestKey(t.app, ['catalog:read']);
    await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(reader.key))
      .send({ since })
      .expect(403);
    await request(server)
      .patch(`/v1/webhooks/endpoints/${endpoint.id}`)
      .set(bearer(client.key))
      .send({ enabled: false })
      .expect(200);
    const disabled = await request(server)
      .post(`/v1/webhooks/endpoints/${endpoint.id}/recover`)
      .set(bearer(client.key))
      .send({ since })
      .expect(409);
    expect(disabled.body.error.code).toBe('CONFLICT');
  });
});
