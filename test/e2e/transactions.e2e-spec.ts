import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  cancelBody,
  getTx,
  seedTicket,
  signUser,
  waitForTx,
  type TxBody,
} from '../support/transactions-helpers';

const ENV = {
  TX_TRACKER_INTERVAL_MS: '50',
  TX_RESUBMIT_BASE_DELAY_MS: '50',
  TX_RESUBMIT_MAX_DELAY_MS: '200',
  TX_LEASE_MS: '5000',
  TX_MAX_PARAMS: '3',
  // One attempt per upstream call: an injected fault reaches the service as is. Timeouts leave room
  // for a loaded machine (a hang still ends in a timeout).
  UPSTREAM_MAX_ATTEMPTS: '1',
  UPSTREAM_SIGN_TIMEOUT_MS: '5000',
  UPSTREAM_SUBMIT_TIMEOUT_MS: '2500',
  UPSTREAM_BREAKER_THRESHOLD: '1000',
  RATE_LIMIT_TRANSACTIONS_WRITE: '100000',
};

const fieldsOf = (res: request.Response): string[] =>
  (res.body.error.details as { field: string }[]).map((d) => d.field);

describe('Transactions (e2e, against the sandbox)', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let n = 0;
  const key = (): string => `key-${++n}-${Date.now()}`;

  beforeAll(async () => {
    t = await startTestApp(ENV, { sandbox: { landingDelayMs: 150 } });
    server = t.app.getHttpServer();
    client = await issueTestKey(t.app, ['transactions:write']);
    other = await issueTestKey(t.app, ['transactions:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  const signed = async (body: unknown, subject = 'alice'): Promise<TxBody> => {
    const res = await signUser(server, client.key, subject, key(), body).expect(201);
    return res.body as TxBody;
  };
  const submit = (id: string): request.Test =>
    request(server).post(`/v1/transactions/${id}/submit`).set(bearer(client.key));

  it('records, submits and tracks a transaction to confirmed, with its history', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    expect(tx).toMatchObject({ phase: 'signed', status: null, final: false });
    expect(t.sandbox.admin.transaction(tx.custodialTransactionId)?.state).toBe('signed');
    const first = (await submit(tx.custodialTransactionId).expect(200)).body as TxBody;
    expect(first).toMatchObject({ status: 'processing', final: false });
    const done = await waitForTx(server, client.key, tx.custodialTransactionId, (x) => x.final);
    expect(done).toMatchObject({ status: 'confirmed', failureReason: null });
    expect(t.sandbox.admin.transaction(tx.custodialTransactionId)?.state).toBe('confirmed');
    expect(t.sandbox.admin.listing(ticket.eventId, ticket.ticketId)).toBeUndefined();
    const statuses = done.history?.filter((h) => h.type === 'status').map((h) => h.status);
    expect(statuses).toEqual(['processing', 'confirmed']);
    expect(done.history?.map((h) => h.type)).toEqual(
      expect.arrayContaining(['created', 'signed', 'submitted']),
    );
    const metrics = (await request(server).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(
      /ledger_transactions\{kind="user",instruction="cancel_listing_v1",status="confirmed"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /ledger_transaction_time_to_final_seconds_count\{[^}]*status="confirmed"\} [1-9]/,
    );
    expect(metrics).toContain('ledger_transactions_oldest_open_age_seconds');
  });

  it('records landed_with_error with the ledger reason', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', false); // not listed: cancelling cannot succeed
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    await submit(tx.custodialTransactionId).expect(200);
    const done = await waitForTx(server, client.key, tx.custodialTransactionId, (x) => x.final);
    expect(done.status).toBe('landed_with_error');
    expect(done.failureReason).toContain('listing not found');
    expect(t.sandbox.admin.transaction(tx.custodialTransactionId)).toMatchObject({
      state: 'landed_with_error',
      failureReason: done.failureReason,
    });
  });

  it('records expired when the blockhash aged out before submission', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    t.sandbox.admin.advanceTime(61_000);
    const res = (await submit(tx.custodialTransactionId).expect(200)).body as TxBody;
    expect(res).toMatchObject({ status: 'expired', final: true });
    expect(t.sandbox.admin.transaction(tx.custodialTransactionId)?.state).toBe('expired');
    expect(t.sandbox.admin.listing(ticket.eventId, ticket.ticketId)).toBeDefined();
  });

  it('never records a null status as a failure and tracks on to confirmed', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    t.sandbox.admin.addFault({ operation: 'submit', kind: 'status_null', times: 3 });
    const res = (await submit(tx.custodialTransactionId).expect(200)).body as TxBody;
    expect(res).toMatchObject({ status: null, final: false, trackingStopped: null });
    const done = await waitForTx(server, client.key, tx.custodialTransactionId, (x) => x.final);
    expect(done.status).toBe('confirmed');
    expect(done.history?.some((h) => h.status === 'landed_with_error' || h.status === 'expired')).toBe(false);
  });

  it('treats a submission timeout as unknown (202), never as failed, and tracks on to confirmed', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    t.sandbox.admin.addFault({ operation: 'submit', kind: 'hang', times: 1 });
    const res = (await submit(tx.custodialTransactionId).expect(202)).body as TxBody;
    // Meanwhile the tracker may already have re-submitted it: whatever it says, never a failure.
    expect([null, 'processing', 'confirmed']).toContain(res.status);
    expect(res.trackingStopped).toBeNull();
    const done = await waitForTx(server, client.key, tx.custodialTransactionId, (x) => x.final);
    expect(done.status).toBe('confirmed');
    expect(done.history?.some((h) => h.type === 'submit_failed')).toBe(true);
    expect(done.history?.some((h) => h.status === 'landed_with_error' || h.status === 'expired')).toBe(false);
  });

  it('50 concurrent identical requests with one key sign exactly one upstream transaction', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const body = cancelBody(t.sandbox, 'alice', ticket);
    const before = t.sandbox.admin.stats().transactions;
    const k = key();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => signUser(server, client.key, 'alice', k, body)),
    );
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1);
    const codes = answers.map((a) => a.status);
    // Usually one 201; a second one is possible when the first call outlived its lease and a waiting
    // request took over with the same upstream key (the upstream replayed: still one transaction).
    expect(codes.filter((c) => c === 201).length).toBeGreaterThanOrEqual(1);
    expect(codes.every((c) => c === 201 || c === 200 || c === 409)).toBe(true);
    for (const a of answers.filter((x) => x.status === 200))
      expect(a.headers['idempotent-replayed']).toBe('true');
    for (const a of answers.filter((x) => x.status === 409))
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    const ids = new Set(
      answers.filter((a) => a.status < 300).map((a) => (a.body as TxBody).custodialTransactionId),
    );
    expect(ids.size).toBe(1);
    // A later retry is a replay of the same transaction.
    const replay = await signUser(server, client.key, 'alice', k, body).expect(200);
    expect((replay.body as TxBody).custodialTransactionId).toBe([...ids][0]);
  });

  it('answers 422 to the same key with a different body, without calling the upstream', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const k = key();
    await signUser(server, client.key, 'alice', k, cancelBody(t.sandbox, 'alice', ticket)).expect(201);
    const before = t.sandbox.admin.stats().transactions;
    const another = seedTicket(t.sandbox, 'alice', true);
    const res = await signUser(
      server,
      client.key,
      'alice',
      k,
      cancelBody(t.sandbox, 'alice', another),
    ).expect(422);
    expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(t.sandbox.admin.stats().transactions).toBe(before);
  });

  it('scopes keys per client: the same key from another client is another transaction', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const body = cancelBody(t.sandbox, 'alice', ticket);
    const k = key();
    const a = (await signUser(server, client.key, 'alice', k, body).expect(201)).body as TxBody;
    const b = (await signUser(server, other.key, 'alice', k, body).expect(201)).body as TxBody;
    expect(a.custodialTransactionId).not.toBe(b.custodialTransactionId);
    // …and only its creator can read it.
    await request(server)
      .get(`/v1/transactions/${a.custodialTransactionId}`)
      .set(bearer(other.key))
      .expect(404);
  });

  it('after a lost signing response, the retry with the same key returns the same transaction', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const body = cancelBody(t.sandbox, 'alice', ticket);
    const k = key();
    const before = t.sandbox.admin.stats().transactions;
    t.sandbox.admin.addFault({ operation: 'signUser', kind: 'response_lost', times: 1 });
    const lost = await signUser(server, client.key, 'alice', k, body);
    expect([502, 504]).toContain(lost.status);
    expect(lost.body.error.message).toContain('same Idempotency-Key');
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1); // it did execute upstream
    // The tracker may be resolving it with the same key right now (409 while it holds the row).
    let retry = await signUser(server, client.key, 'alice', k, body);
    for (let i = 0; i < 50 && retry.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 100));
      retry = await signUser(server, client.key, 'alice', k, body);
    }
    expect([200, 201]).toContain(retry.status);
    const tx = retry.body as TxBody;
    expect(t.sandbox.admin.stats().transactions).toBe(before + 1); // nothing signed twice
    expect(t.sandbox.admin.transaction(tx.custodialTransactionId)?.state).toBe('signed');
  });

  it('rejects bad input with 400 naming the element and field, before anything goes upstream', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const good = cancelBody(t.sandbox, 'alice', ticket) as {
      platformInstructions: { params: Record<string, unknown>[] };
    };
    const p = good.platformInstructions.params[0];
    const before = t.sandbox.admin.stats().transactions;
    // Missing key.
    await signUser(server, client.key, 'alice', undefined, good).expect(400);
    // Key too long.
    await signUser(server, client.key, 'alice', 'k'.repeat(256), good).expect(400);
    // u64 out of range in the second element.
    const bad = {
      platformInstructions: {
        instruction: 'cancel_listing_v1',
        params: [p, { ...p, ticket_id: '2', event_id: '18446744073709551616' }],
      },
    };
    let res = await signUser(server, client.key, 'alice', key(), bad).expect(400);
    expect(fieldsOf(res)).toEqual(['platformInstructions.params[1].event_id']);
    // Duplicate (event_id, ticket_id) pair.
    res = await signUser(server, client.key, 'alice', key(), {
      platformInstructions: { instruction: 'cancel_listing_v1', params: [p, { ...p }] },
    }).expect(400);
    expect(fieldsOf(res)).toEqual(['platformInstructions.params[1].ticket_id']);
    // Too many params (TX_MAX_PARAMS=3), unknown instruction, unknown and missing fields.
    res = await signUser(server, client.key, 'alice', key(), {
      platformInstructions: { instruction: 'cancel_listing_v1', params: [p, p, p, p] },
    }).expect(400);
    expect(fieldsOf(res)).toEqual(['platformInstructions.params']);
    res = await signUser(server, client.key, 'alice', key(), {
      platformInstructions: { instruction: 'burn_v1', params: [p] },
    }).expect(400);
    expect(fieldsOf(res)).toEqual(['platformInstructions.instruction']);
    res = await signUser(server, client.key, 'alice', key(), {
      platformInstructions: {
        instruction: 'cancel_listing_v1',
        params: [{ event_id: 1, ticket_id: 2 ** 53, extra: true }],
      },
    }).expect(400);
    expect(fieldsOf(res).sort()).toEqual([
      'platformInstructions.params[0].canceller',
      'platformInstructions.params[0].extra',
      'platformInstructions.params[0].ticket_id',
    ]);
    expect(t.sandbox.admin.stats().transactions).toBe(before);
  });

  it('submits through the contract-shaped route and reports the upstream status unchanged', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    const res = await request(server)
      .post('/v1/transactions/submissions')
      .set(bearer(client.key))
      .send({ signedTransaction: tx.signedTransaction })
      .expect(200);
    expect(res.body).toEqual({
      custodialTransactionId: tx.custodialTransactionId,
      transactionSignature: expect.any(String),
      status: 'processing',
    });
    // Another client cannot submit it through us.
    await request(server)
      .post('/v1/transactions/submissions')
      .set(bearer(other.key))
      .send({ signedTransaction: tx.signedTransaction })
      .expect(404);
    await waitForTx(server, client.key, tx.custodialTransactionId, (x) => x.final);
  });

  it('records a 4xx on re-submission, stops tracking and surfaces it', async () => {
    const ticket = seedTicket(t.sandbox, 'alice', true);
    const tx = await signed(cancelBody(t.sandbox, 'alice', ticket));
    await submit(tx.custodialTransactionId).expect(200);
    // The sandbox forgets every transaction: a re-submission is now refused with a 400.
    t.sandbox.admin.reset();
    const stopped = await waitForTx(
      server,
      client.key,
      tx.custodialTransactionId,
      (x) => x.trackingStopped !== null,
    );
    expect(stopped).toMatchObject({ trackingStopped: 'rejected', final: false, status: 'processing' });
    expect(stopped.lastError).toMatch(/400/);
    expect(stopped.history?.some((h) => h.type === 'submit_rejected')).toBe(true);
    const again = await getTx(server, client.key, tx.custodialTransactionId);
    expect(again.trackingStopped).toBe('rejected');
  });
});
