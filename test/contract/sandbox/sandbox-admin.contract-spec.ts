import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptParams, batch, TestSandbox } from './sandbox.harness';

describe('sandbox admin API', () => {
  let sut: TestSandbox;
  let headers: Record<string, string>;
  beforeAll(async () => {
    sut = await TestSandbox.start();
    headers = { 'x-sandbox-admin-key': sut.admin.adminKey };
  });
  afterAll(() => sut.close());

  const admin = (method: string, path: string, body?: unknown): ReturnType<TestSandbox['request']> =>
    sut.request(method, `/__sandbox${path}`, { key: null, headers, body });

  it('requires the admin header; the API key is not enough', async () => {
    expect((await sut.request('GET', '/__sandbox/state', { key: sut.admin.apiKey })).status).toBe(401);
    expect((await admin('GET', '/state')).status).toBe(200);
  });

  it('looks up custodial wallet addresses and funds them', async () => {
    const user = await admin('GET', '/wallets/users/alice');
    expect(user.json()).toMatchObject({
      kind: 'user',
      subject: 'alice',
      address: sut.admin.userWalletAddress('alice'),
    });
    const integrator = await admin('GET', '/wallets/integrators/alice');
    expect(integrator.json().address).toBe(sut.admin.integratorWalletAddress('alice'));
    expect(integrator.json().address).not.toBe(user.json().address);
    const funded = await admin('POST', '/wallets/users/alice/fund', { amount_minor: '5' });
    expect(BigInt(funded.json().balance_minor as string)).toBe(
      BigInt(user.json().balance_minor as string) + 5n,
    );
  });

  it('creates events, mints tickets and seeds listings visible to the indexer', async () => {
    const event = await admin('POST', '/events', {
      event_id: '9007199254740993',
      name: 'Admin show',
      start_at: '2031-01-01T20:00:00Z',
    });
    expect(event.status).toBe(201);
    expect((await admin('POST', '/events', { event_id: '9007199254740993' })).status).toBe(409);
    const ticket = await admin('POST', '/tickets', {
      event_id: '9007199254740993',
      ticket_id: '42',
      owner: { kind: 'user', subject: 'carol' },
    });
    expect(ticket.status).toBe(201);
    expect(ticket.json().owner).toBe(sut.admin.userWalletAddress('carol'));
    expect(
      (await admin('POST', '/tickets', { event_id: '1', owner: { kind: 'user', subject: 'c' } })).status,
    ).toBe(404);
    const listing = await admin('POST', '/listings', {
      event_id: '9007199254740993',
      ticket_id: '42',
      seller: { kind: 'user', subject: 'carol' },
      ask_price_minor: '1000',
    });
    expect(listing.status).toBe(201);
    const page = await sut.get('/indexer/listings/active?eventId=9007199254740993');
    expect(page.json().items).toEqual([listing.json()]);
    const view = await admin('GET', '/tickets/9007199254740993/42');
    expect(view.json()).toMatchObject({ listed_permit_version: '1', listing: listing.json() });
  });

  it('lists the signed transactions of the ledger, filtered by instruction and state', async () => {
    const [listing] = await sut.firstListings(1);
    const signed = await sut.sign(
      'users',
      'auditor',
      'audit-key-1',
      batch('accept_offer_v2', [acceptParams(sut, listing, 'auditor')]),
    );
    expect(signed.status).toBe(200);
    const id = signed.json().custodialTransactionId as string;
    const all = await admin('GET', '/transactions?instruction=accept_offer_v2');
    expect(all.status).toBe(200);
    expect(all.json().items).toEqual([
      expect.objectContaining({
        custodialTransactionId: id,
        state: 'signed',
        instruction: 'accept_offer_v2',
        walletKind: 'user',
        subject: 'auditor',
        idempotencyKey: 'audit-key-1',
        items: [{ event_id: listing.event_id, ticket_id: listing.ticket_id }],
        submittedAtMs: null,
      }),
    ]);
    expect((await admin('GET', '/transactions?state=confirmed')).json().items).toEqual([]);
    expect((await admin('GET', '/transactions?instruction=list_ticket_v2')).json().items).toEqual([]);
    expect((await admin('GET', '/transactions?state=signed')).json().items).toHaveLength(1);
  });

  it('advances the clock, so events stop being upcoming', async () => {
    const before = ((await sut.get('/indexer/events/upcoming?limit=1000')).json() as { items: unknown[] })
      .items.length;
    const moved = await admin('POST', '/clock/advance', { ms: 30 * 86_400_000 });
    expect(moved.status).toBe(200);
    const after = ((await sut.get('/indexer/events/upcoming?limit=1000')).json() as { items: unknown[] })
      .items.length;
    expect(after).toBeLessThan(before);
    expect((await admin('POST', '/clock/advance', { ms: -1 })).status).toBe(400);
  });

  it('resets to the seeded dataset and invalidates old cursors', async () => {
    const cursor = (await sut.get('/indexer/listings/active?limit=1')).json().next_cursor as string;
    const reset = await admin('POST', '/reset');
    expect(reset.status).toBe(200);
    expect((await sut.get(`/indexer/listings/active?cursor=${encodeURIComponent(cursor)}`)).status).toBe(400);
    expect(reset.json()).toMatchObject({ transactions: 0 });
  });
});
