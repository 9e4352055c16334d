import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SandboxProcess } from '../../bench/chaos/sandbox-process';
import type { ServiceReplica } from '../../bench/chaos/service-replica';
import { appendStatement } from '../support/outbox-events';
import type { NewEvent } from '../../src/webhooks/webhook-events';
import { TwoReplicas } from '../support/two-replicas';
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

const EVENTS = 60;

const byNumber = (x: number, y: number): number => x - y;

/**
 * Deliveries across two real service processes on one database (issue 24): every event reaches the receiver
 * exactly once while both replicas' workers race for the deliveries; a replica killed with SIGKILL while its send
 * waits for the receiver's answer leaves the delivery to the other one, which re-sends the same webhook-id after
 * the lease runs out (the only duplicate, and counted at the receiver).
 */
describe('Webhooks across two replicas (e2e: two service processes, one receiver)', () => {
  const replicas = new TwoReplicas(inject('databaseAdminUrl'));
  const apiKey = replicas.apiKey;
  let sandbox: SandboxProcess;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let receiver: WebhookReceiver;
  let db: Client;
  let clientId = '';

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    sandbox = await SandboxProcess.start(replicas.group, { seed: 'hooks' });
    ({ a, b } = await replicas.start({
      name: 'hooks',
      upstreamUrl: sandbox.url,
      extra: {
        SYNC_ENABLED: 'false',
        SYNC_ON_STARTUP: 'false',
        LOG_LEVEL: 'info',
        WEBHOOKS_WORKER_INTERVAL_MS: '50',
        // One replica sends at most 8 at once; the endpoint's and client's caps (across replicas) leave room for
        // both, so 9 sends in flight at once can only be both replicas sending.
        WEBHOOKS_WORKER_CONCURRENCY: '8',
        WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT: '16',
        WEBHOOKS_CLIENT_MAX_IN_FLIGHT: '16',
        WEBHOOKS_DELIVERY_TIMEOUT_MS: '10000',
        WEBHOOKS_LEASE_MS: '12000',
      },
    }));
    db = new Client({ connectionString: replicas.databaseUrl });
    await db.connect();
    const res = await fetch(`${a.url}/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    if (res.status !== 201) throw new Error(`endpoint not registered: ${res.status}`);
    const me = await fetch(`${b.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    clientId = ((await me.json()) as { id: string }).id;
  }, 180_000);
  afterAll(async () => {
    await db?.end();
    await replicas.stop();
    await receiver?.close();
  });

  /** Appends `n` events for the client in one transaction of the test (the outbox's own statement). */
  const append = async (n: number, tag: string): Promise<string[]> => {
    const events: NewEvent[] = Array.from({ length: n }, (_, i) => ({
      type: 'order.state_changed',
      clientId,
      data: { order_id: `${tag}-${i}`, state: 'submitted', previous_state: 'signed', attempt: 1 },
    }));
    const { statement, ids } = appendStatement(events);
    await db.query(statement.text, statement.values);
    return ids;
  };
  const statuses = async (ids: string[]) =>
    (
      await db.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY status`,
        [ids],
      )
    ).rows;

  it('both replicas deliver: each event arrives exactly once', async () => {
    // The first 9 sends get no answer until 9 are waiting: more than one replica may hold, so both are sending
    // (with a fast receiver one replica's refilled passes could take every claim, and the race proved nothing).
    let releasing = false;
    receiver.answer = () => (releasing ? 200 : 'hold');
    const ids = await append(EVENTS, 'race');

    await waitUntil(() => receiver.heldCount >= 9, 20_000);
    const owners = await db.query<{ pid: string }>(
      `SELECT DISTINCT split_part(lease_owner, ':', 2) AS pid FROM webhook_deliveries
       WHERE event_id = ANY($1) AND lease_owner IS NOT NULL`,
      [ids],
    );
    expect(owners.rows.map((r) => Number(r.pid)).sort(byNumber)).toEqual(
      [a.proc?.pid, b.proc?.pid].map(Number).sort(byNumber),
    );
    releasing = true;
    receiver.releaseHeld();

    await waitUntil(
      async () => (await statuses(ids)).some((s) => s.status === 'delivered' && s.n === EVENTS),
      60_000,
    );
    const counts = receiver.counts();
    expect(ids.map((id) => counts.get(id) ?? 0)).toEqual(ids.map(() => 1));
    expect(a.output()).toContain('"outcome":"delivered"');
    expect(b.output()).toContain('"outcome":"delivered"');
    const held = await db.query(`SELECT 1 FROM webhook_deliveries WHERE lease_owner IS NOT NULL`);
    expect(held.rows).toEqual([]);
  }, 90_000);

  it('a replica killed mid-send: the other re-sends the same webhook-id after the lease, once', async () => {
    const [id] = await append(1, 'crash');
    // The first send of this event gets no answer until the sender is gone.
    receiver.answer = (r) => (r.id === id && (receiver.counts().get(id) ?? 0) === 1 ? 'hold' : 200);
    await waitUntil(() => receiver.heldCount === 1, 20_000);
    const { rows } = await db.query<{ owner: string }>(
      `SELECT lease_owner AS owner FROM webhook_deliveries WHERE event_id = $1`,
      [id],
    );
    const pid = Number(rows[0]?.owner.split(':')[1]);
    const [victim, survivor] = a.proc?.pid === pid ? [a, b] : [b, a];
    expect(victim.proc?.pid).toBe(pid);

    await victim.kill9();
    receiver.releaseHeld();
    await waitUntil(async () => (await statuses([id ?? ''])).some((s) => s.status === 'delivered'), 60_000);

    expect(receiver.counts().get(id ?? '')).toBe(2);
    expect(survivor.output()).toContain('durable work lease expired, taken over');
    const [row] = (
      await db.query<{ attempts: number }>(`SELECT attempts FROM webhook_deliveries WHERE event_id = $1`, [
        id,
      ])
    ).rows;
    expect(row?.attempts).toBe(2);
  }, 90_000);
});
