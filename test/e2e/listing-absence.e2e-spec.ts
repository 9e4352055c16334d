import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  mirrorListing,
  orderBody,
  ownerOf,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

/** A revalidation give-up far past any test's bounds: only the give-up test runs with a short one. */
const LONG_GIVE_UP_MS = 60_000;
/** Failing listings reads in a row: several walks' worth, each walk giving up after at most 4 tries. */
const LISTINGS_ERRORS = 12;

/**
 * Issue 23, item 2: a live walk proves a listing absent only when it is complete (next_cursor null) and no item
 * with a null identifier could be the listing (contract 2.7, 2.8 rule 2). Checkout, `?fresh=true` reads and
 * the sync sweep must never call a live listing gone on a walk whose ids came back null.
 */
describe('Listing absence: null identifiers and early ends prove nothing (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let n = 0;

  beforeAll(async () => {
    // A give-up no test here reaches: these orders must be decided by what the walks find, never by the time a
    // slow machine took (giving up has its own describe below, with a short one).
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        CHECKOUT_REVALIDATE_GIVE_UP_MS: String(LONG_GIVE_UP_MS),
        LISTINGS_FRESH_TIMEOUT_MS: '3000',
      },
      { sandbox: { landingDelayMs: 20 } },
    );
    client = await issueTestKey(t.app, ['orders:write', 'catalog:read']);
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    t.sandbox.admin.clearFaults();
  });

  const nullIds = (times?: number) =>
    t.sandbox.admin.setFaults([
      { operation: 'listings', kind: 'null_ids', fraction: 1, ...(times === undefined ? {} : { times }) },
    ]);

  async function order(listing: Parameters<typeof orderBody>[0], buyer: Parameters<typeof orderBody>[1]) {
    const res = await postOrder(t.app, client.key, `absence-${++n}`, orderBody(listing, buyer));
    expect(res.status).toBe(202);
    return res.body.id;
  }

  const fresh = (l: { eventId: bigint; ticketId: bigint }) =>
    t.app.inject({
      method: 'GET',
      url: `/v1/listings/${l.eventId}/${l.ticketId}?fresh=true`,
      headers: bearer(client.key),
    });

  it('an order for a live listing is not rejected while every id comes back null, and is confirmed after', async () => {
    const { listing, buyer } = market(t.sandbox, 'null-then-clean');
    // Every item of the first two walks has event_id or ticket_id null: neither walk can find nor rule it out.
    nullIds(2);
    const done = await waitFinal(t.app, client.key, await order(listing, buyer), 20_000);
    expect({ state: done.state, failure: done.failure }).toEqual({ state: 'confirmed', failure: null });
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('a listing absent from a clean complete walk is still rejected LISTING_GONE', async () => {
    const { listing, buyer } = market(t.sandbox, 'gone');
    const missing = { ...listing, ticketId: listing.ticketId + 1_000_000n };
    const done = await waitFinal(t.app, client.key, await order(missing, buyer), 20_000);
    expect({ state: done.state, code: done.failure?.code }).toEqual({
      state: 'rejected',
      code: 'LISTING_GONE',
    });
  });

  it('a walk ended early by upstream errors does not reject an absent listing until a clean walk does', async () => {
    const { listing, buyer } = market(t.sandbox, 'gone-under-errors');
    const missing = { ...listing, ticketId: listing.ticketId + 1_000_000n };
    // The next listings reads fail, enough of them for several walks (one walk makes at most
    // UPSTREAM_MAX_ATTEMPTS = 4 tries); the reads after them are clean.
    t.sandbox.admin.setFaults([
      { operation: 'listings', kind: 'error', status: 503, times: LISTINGS_ERRORS },
    ]);
    const id = await order(missing, buyer);
    const done = await waitFinal(t.app, client.key, id, 20_000);
    expect({ state: done.state, code: done.failure?.code }).toEqual({
      state: 'rejected',
      code: 'LISTING_GONE',
    });
    // Rejected only once every error had been used: a walk ended early by an error that decided the order would
    // have left some unused (a decided order walks no more).
    expect(t.sandbox.admin.faults()).toEqual([]);
    // The walks the errors ended were retried, not decided.
    expect(done.steps?.map((s) => s.step)).toContain('retry_scheduled');
  });

  describe('GET /v1/listings/{event_id}/{ticket_id}?fresh=true', () => {
    it('ids null on every walk: an upstream error, and the mirror row stays live (not 410)', async () => {
      const { listing } = market(t.sandbox, 'fresh-null');
      await refreshMirror(t.app, listing.eventId);
      nullIds();
      const res = await fresh(listing);
      expect({ status: res.statusCode, code: res.json().error?.code }).toEqual({
        status: 502,
        code: 'UPSTREAM_UNAVAILABLE',
      });
      expect(await mirrorListing(t.app, listing.eventId, listing.ticketId)).toEqual({ removed_at: null });
    });

    it('ids null on the first walk only: a later walk of the same read finds it (200)', async () => {
      const { listing } = market(t.sandbox, 'fresh-null-once');
      await refreshMirror(t.app, listing.eventId);
      nullIds(1);
      const res = await fresh(listing);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ ticket_id: listing.ticketId.toString() });
      expect(await mirrorListing(t.app, listing.eventId, listing.ticketId)).toEqual({ removed_at: null });
    });

    it('a listing absent from a clean complete walk is 410 and removed from the mirror', async () => {
      const { listing } = market(t.sandbox, 'fresh-gone');
      const expiring = expiringListing(listing.eventId, 'fresh-gone');
      await refreshMirror(t.app, listing.eventId);
      t.sandbox.admin.advanceTime(EXPIRY_S * 2_000);
      const res = await fresh(expiring);
      expect(res.statusCode).toBe(410);
      expect((await mirrorListing(t.app, listing.eventId, expiring.ticketId))?.removed_at).not.toBeNull();
    });
  });

  it('a sync pass whose ids come back null never sweeps the live listings they could be', async () => {
    const { listing } = market(t.sandbox, 'sweep-null');
    const expiring = expiringListing(listing.eventId, 'sweep-null');
    await refreshMirror(t.app, listing.eventId);
    t.sandbox.admin.advanceTime(EXPIRY_S * 2_000);
    nullIds();
    await refreshMirror(t.app, listing.eventId);
    expect(await mirrorListing(t.app, listing.eventId, listing.ticketId)).toEqual({ removed_at: null });
    // Once the ids are back, a clean complete pass sweeps what is really gone, and only that.
    t.sandbox.admin.clearFaults();
    await refreshMirror(t.app, listing.eventId);
    expect(await mirrorListing(t.app, listing.eventId, listing.ticketId)).toEqual({ removed_at: null });
    expect((await mirrorListing(t.app, listing.eventId, expiring.ticketId))?.removed_at).not.toBeNull();
  });

  /** A second listing of the event that expires EXPIRY_S seconds from the sandbox's now (advanceTime ends it). */
  function expiringListing(eventId: bigint, name: string): { eventId: bigint; ticketId: bigint } {
    const expiresAt = BigInt(Math.floor(t.sandbox.admin.now() / 1000) + EXPIRY_S);
    const view = t.sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: `expiring-${name}` },
      askPriceMinor: 1_000n,
      expiresAt,
    });
    return { eventId, ticketId: BigInt(view.ticket_id) };
  }
});

const EXPIRY_S = 30;

/**
 * Giving up: an order whose revalidation never decides (every id null on every walk) fails once
 * CHECKOUT_REVALIDATE_GIVE_UP_MS has passed since its attempt began. An app of its own with a short give-up, so
 * the test ends in seconds, while the tests above run with a give-up no slow machine reaches.
 */
describe('Listing absence: ids null for longer than the give-up (e2e)', () => {
  let t: TestApp;
  let client: TestClient;

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, CHECKOUT_REVALIDATE_GIVE_UP_MS: '2000' },
      { sandbox: { landingDelayMs: 20 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ids null for longer than the give-up: UPSTREAM_UNAVAILABLE, nothing signed, never LISTING_GONE', async () => {
    const { listing, buyer } = market(t.sandbox, 'null-forever');
    const signedBefore = t.sandbox.admin.stats().transactions;
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'null_ids', fraction: 1 }]);
    const posted = await postOrder(t.app, client.key, 'absence-give-up', orderBody(listing, buyer));
    expect(posted.status).toBe(202);
    const done = await waitFinal(t.app, client.key, posted.body.id, 20_000);
    expect({ state: done.state, code: done.failure?.code }).toEqual({
      state: 'failed',
      code: 'UPSTREAM_UNAVAILABLE',
    });
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
    expect(t.sandbox.admin.listing(listing.eventId, listing.ticketId)).toBeTruthy();
  });
});
