import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  mirrorListing,
  orderBody,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * Purchases land this long (sandbox time) after submission: far longer than the test runs, so one lands only
 * when the test advances the sandbox clock, after it has broken the listings reads. Under the sandbox's default
 * 60 s blockhash lifetime, so the advance lands the purchase rather than expiring it.
 */
const LANDING_DELAY_MS = 30_000;

/**
 * After `confirmed`, checkout refreshes the event in the mirror so the bought listing leaves it. A refresh pass
 * that runs but fails (its upstream walk failed) refreshed nothing: the step is tried again, never recorded as
 * `mirror_refreshed` with the sold listing still in the mirror.
 */
describe('Checkout refreshes the mirror after confirmed, retrying a failed refresh pass (e2e)', () => {
  let t: TestApp;
  let client: TestClient;

  beforeAll(async () => {
    t = await startTestApp(CHECKOUT_TEST_ENV, { sandbox: { landingDelayMs: LANDING_DELAY_MS } });
    client = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a refresh pass that failed is run again; the listing leaves the mirror', async () => {
    const { listing, buyer } = market(t.sandbox, 'refresh-retry');
    await refreshMirror(t.app, listing.eventId);
    expect((await mirrorListing(t.app, listing.eventId, listing.ticketId))?.removed_at).toBeNull();
    const posted = await postOrder(t.app, client.key, 'refresh-retry', orderBody(listing, buyer));
    expect(posted.status).toBe(202);
    let transactionId = '';
    await waitUntil(
      async () => {
        const { body } = await getOrder(t.app, client.key, `/v1/orders/${posted.body.id}`);
        transactionId = body.transaction?.custodial_transaction_id ?? '';
        return body.state === 'submitted';
      },
      10_000,
      10,
    );
    // Submitted and not landed: nothing lands until the test moves the sandbox clock.
    expect(t.sandbox.admin.transaction(transactionId)?.state).toBe('processing');
    // From now on every listings read fails: the first refresh passes after `confirmed` fail.
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'error', status: 503 }]);
    try {
      // Only now does the purchase land (the order turns `confirmed` at its next poll), with the faults in place.
      t.sandbox.admin.advanceTime(LANDING_DELAY_MS);
      expect(t.sandbox.admin.transaction(transactionId)?.state).toBe('confirmed');
      // Until a refresh after `confirmed` has run (failed and scheduled again, or — before the fix — recorded).
      await waitUntil(
        async () => {
          const { body } = await getOrder(t.app, client.key, `/v1/orders/${posted.body.id}?steps=true`);
          return body.steps?.some((s) => s.state === 'confirmed' && s.step !== 'confirmed') ?? false;
        },
        10_000,
        10,
      );
    } finally {
      t.sandbox.admin.clearFaults();
    }
    const done = await waitFinal(t.app, client.key, posted.body.id, 30_000);
    expect(done.state).toBe('confirmed');
    const steps = done.steps?.map((s) => s.step);
    expect(steps).toContain('retry_scheduled');
    expect(steps).toContain('mirror_refreshed');
    expect((await mirrorListing(t.app, listing.eventId, listing.ticketId))?.removed_at).not.toBeNull();
  });
});
