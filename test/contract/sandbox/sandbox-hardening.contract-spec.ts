import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptParams, batch, TestSandbox } from './sandbox.harness';

const U64_MAX = 18_446_744_073_709_551_615n;

/** What an outside probe of the running sandbox found (issue 8 part 7); each case failed before its fix. */
describe('sandbox hardening', () => {
  let sut: TestSandbox;
  let headers: Record<string, string>;
  beforeEach(async () => {
    sut = await TestSandbox.start();
    headers = { 'x-sandbox-admin-key': sut.admin.adminKey };
  });
  afterEach(() => sut.close());

  const admin = (method: string, path: string, body?: unknown): ReturnType<TestSandbox['request']> =>
    sut.request(method, `/__sandbox${path}`, { key: null, headers, body });

  it('accepts a fractional fault rate over the admin HTTP API', async () => {
    const put = await admin('PUT', '/faults', {
      rules: [{ operation: 'listings', kind: 'error', rate: 0.2, status: 502 }],
      seed: 'fractional',
    });
    expect(put.status).toBe(200);
    expect(put.json().rules).toEqual([{ operation: 'listings', kind: 'error', rate: 0.2, status: 502 }]);
    const post = await admin('POST', '/faults', { operation: 'events', kind: 'null_ids', fraction: 0.5 });
    expect(post.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await sut.get('/indexer/listings/active?limit=1')).status);
    // Some calls fail and most succeed: a partial-fault run, reproducible from the seed.
    expect(statuses.filter((s) => s === 502).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(20);
  });

  it('answers a fault rule out of range with {path, message} details', async () => {
    const put = await admin('PUT', '/faults', {
      rules: [{ operation: 'listings', kind: 'error', rate: 1.5 }],
    });
    expect(put.status).toBe(400);
    expect(put.json().details).toEqual([{ path: 'rules[0].rate', message: expect.any(String) }]);
    const post = await admin('POST', '/faults', { operation: 'nope', kind: 'error' });
    expect(post.status).toBe(400);
    expect(post.json().details).toEqual([{ path: 'operation', message: expect.any(String) }]);
  });

  it('refuses a clock advance past the representable time with 400 and stays usable', async () => {
    const huge = await admin('POST', '/clock/advance', { ms: 9_007_199_254_740_991 });
    expect(huge.status).toBe(400);
    expect(huge.json()).toMatchObject({ error: 'bad_request' });
    expect((await admin('GET', '/state')).status).toBe(200);
    expect((await admin('POST', '/clock/advance', { ms: 1000 })).status).toBe(200);
    expect((await admin('POST', '/reset')).status).toBe(200);
    expect((await sut.get('/indexer/events/upcoming?limit=1')).status).toBe(200);
  });

  it('refuses to fund a balance past u64 with 422 and leaves it unchanged', async () => {
    const before = await admin('GET', '/wallets/users/rich');
    const balance = BigInt(before.json().balance_minor as string);
    const over = await admin('POST', '/wallets/users/rich/fund', {
      amount_minor: (U64_MAX - balance + 1n).toString(),
    });
    expect(over.status).toBe(422);
    expect(over.json()).toMatchObject({ error: 'balance_overflow' });
    const after = await admin('GET', '/wallets/users/rich');
    expect(after.json().balance_minor).toBe(balance.toString());
    const exact = await admin('POST', '/wallets/users/rich/fund', {
      amount_minor: (U64_MAX - balance).toString(),
    });
    expect(exact.status).toBe(200);
    expect(exact.json().balance_minor).toBe(U64_MAX.toString());
    expect(() => sut.admin.fund({ kind: 'user', subject: 'rich' }, 1n)).toThrow(/u64/);
  });

  it('fails a purchase landing that would push the seller payout balance past u64', async () => {
    const [listing] = await sut.firstListings(1);
    const payout = { address: listing.seller_payout as string };
    sut.admin.fund(payout, U64_MAX - sut.admin.balance(payout));
    const signed = await sut.sign(
      'users',
      'overflow-buyer',
      'overflow-1',
      batch('accept_offer_v2', [acceptParams(sut, listing, 'overflow-buyer')]),
    );
    expect(signed.status).toBe(200);
    const body = signed.json();
    expect((await sut.submit({ signedTransaction: body.signedTransaction })).status).toBe(200);
    sut.admin.advanceTime(5000);
    const state = sut.admin.transaction(body.custodialTransactionId as string);
    expect(state).toMatchObject({ state: 'landed_with_error', failureReason: expect.stringMatching(/u64/) });
    expect(sut.admin.balance(payout)).toBe(U64_MAX);
  });

  it.each([
    ['an admin body', 'POST', '/__sandbox/events', 'admin'],
    ['a signing body', 'POST', '/wallets/users/alice/signatures', 'api'],
  ] as const)('answers ~1,500-deep nested JSON in %s with 400, not 500', async (_what, method, path, who) => {
    const rawBody = `${'['.repeat(1500)}${']'.repeat(1500)}`;
    const result = await sut.request(method, path, {
      key: who === 'api' ? undefined : null,
      headers: { ...(who === 'admin' ? headers : { 'idempotency-key': 'deep-1' }) },
      rawBody,
    });
    expect(result.status).toBe(400);
    expect(result.json().message).toMatch(/nesting too deep/);
  });
});
