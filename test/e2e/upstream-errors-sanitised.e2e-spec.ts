import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, market, orderBody, postOrder, waitFinal } from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

/** The sandbox's default read-only key: reads pass, signing is refused with a 403 and a body of the upstream's own. */
const READ_ONLY_KEY = 'trk_test_sandbox_read_only_00000000000000002';
/** Words of the sandbox's 403 body (`this API key lacks the sign permission`). */
const UPSTREAM_BODY = /lacks the|permission|forbidden/i;

/**
 * Issue 31 item 8: an upstream error body never reaches a tenant. A signing refused with a 403 fails the order
 * with a stable code and a fixed message ("The upstream refused the signing request (403)"): its failure reason
 * and audit steps carry no upstream text; the upstream's own words are in the log next to the record's id.
 */
describe('Upstream error bodies stay in the logs (e2e)', () => {
  let t: TestApp;
  let client: TestClient;

  beforeAll(async () => {
    t = await startTestApp(CHECKOUT_TEST_ENV, { upstreamApiKey: READ_ONLY_KEY });
    client = await issueTestKey(t.app, ['orders:write']);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it("an order whose signing is refused (403) fails with a code and a sanitised reason, not the upstream's body", async () => {
    const { listing, buyer } = market(t.sandbox, 'sanitised-1');
    const posted = await postOrder(t.app, client.key, 'sanitised-1', orderBody(listing, buyer));
    expect(posted.status).toBe(202);
    const final = await waitFinal(t.app, client.key, posted.body.id);
    expect(final.state).toBe('failed');
    expect(final.failure).toEqual({
      code: 'SIGNING_REJECTED',
      reason: 'The upstream refused the signing request (403)',
    });
    const tenantVisible = JSON.stringify(final);
    expect(tenantVisible).not.toMatch(UPSTREAM_BODY);
    // The raw text is kept for operators: in the log, with the ledger record it belongs to.
    const logged = t.logs.records().filter((line) => line.msg === 'upstream signing failed');
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(logged[0])).toMatch(UPSTREAM_BODY);
    expect(logged[0]).toHaveProperty('transactionId');
  });
});
