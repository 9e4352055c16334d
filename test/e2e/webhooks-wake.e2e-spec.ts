import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The delivery worker is woken by the deliveries themselves: every statement inserting `webhook_deliveries`
 * notifies, and an idle worker claims at once instead of on its next timer pass. The timer here is a minute, so
 * only the notification can deliver within the test's seconds.
 */
describe('Webhook deliveries wake the worker (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let receiver: WebhookReceiver;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOKS_WORKER_INTERVAL_MS: '60000' });
    db = t.app.get(DataSource);
    client = await issueTestKey(t.app, ['webhooks:write']);
    receiver = await WebhookReceiver.start();
    await request(t.app.getHttpServer())
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send({ url: receiver.url, description: 'wake test' })
      .expect(201);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const append = async (n: number): Promise<string[]> => {
    const rows = await db.query<{ id: string }[]>(
      `SELECT outbox_event_id() AS id FROM generate_series(1, $1::int)`,
      [n],
    );
    // One statement appending n events, as a trigger's set-based write does: one notification for all of them.
    await db.query(
      `SELECT outbox_append(id, 'order.state_changed', 1::smallint, $2::uuid, jsonb_build_object('n', ord))
       FROM unnest($1::text[]) WITH ORDINALITY AS e(id, ord)`,
      [rows.map((r) => r.id), client.id],
    );
    return rows.map((r) => r.id);
  };

  it('an event appended while the worker is idle arrives in seconds, not at the next pass a minute later', async () => {
    const [id] = await append(1);
    const waited = await waitUntil(() => receiver.ids().includes(id), 10_000);

    expect(waited).toBeLessThan(10_000);
    expect(receiver.ids()).toContain(id);
  });

  it('several events of one statement arrive after its one notification', async () => {
    const ids = await append(5);
    await waitUntil(() => ids.every((id) => receiver.ids().includes(id)), 10_000);

    expect(ids.filter((id) => receiver.ids().includes(id))).toHaveLength(5);
  });
});
