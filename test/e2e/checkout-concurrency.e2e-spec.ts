import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  orderBody,
  ownerOf,
  postOrder,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

const KEYS = 100;
const REQUESTS_PER_KEY = 50;
const KEYS_PER_WAVE = 4;

describe('Checkout idempotency under concurrency (e2e)', () => {
  let t: TestApp;
  let client: TestClient;

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        DB_POOL_SIZE: '20',
        // Under this burst the in-process sandbox answers slowly: the fault-test timeouts would only add retries.
        UPSTREAM_READ_TIMEOUT_MS: '5000',
        UPSTREAM_SIGN_TIMEOUT_MS: '5000',
        UPSTREAM_SUBMIT_TIMEOUT_MS: '5000',
        UPSTREAM_DEADLINE_MS: '15000',
        CHECKOUT_RETRY_MAX_DELAY_MS: '1000',
      },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`${REQUESTS_PER_KEY} concurrent identical requests per key over ${KEYS} keys: one order and one purchase per key`, async () => {
    const buys = Array.from({ length: KEYS }, (_, i) => market(t.sandbox, `conc-${i}`));
    const balances = buys.map((b) => t.sandbox.admin.balance({ address: b.buyer.address }));
    const signedBefore = t.sandbox.admin.stats().transactions;

    // 50 concurrent identical requests for each key; keys in waves of KEYS_PER_WAVE (all 5,000 requests at once
    // only measure this 2-core machine's connection pool, not idempotency).
    const answers: Awaited<ReturnType<typeof postOrder>>[][] = [];
    for (let wave = 0; wave < KEYS; wave += KEYS_PER_WAVE)
      answers.push(
        ...(await Promise.all(
          buys
            .slice(wave, wave + KEYS_PER_WAVE)
            .map((b, j) =>
              Promise.all(
                Array.from({ length: REQUESTS_PER_KEY }, () =>
                  postOrder(t.app, client.key, `conc-key-${wave + j}`, orderBody(b.listing, b.buyer)),
                ),
              ),
            ),
        )),
      );
    const perKey = answers.map((list) => ({
      statuses: [...new Set(list.map((a) => a.status))],
      ids: new Set(list.map((a) => a.body.id)).size,
      fresh: list.filter((a) => a.status === 202 && a.headers['idempotent-replayed'] === undefined).length,
    }));
    expect(perKey).toEqual(perKey.map(() => ({ statuses: [202], ids: 1, fresh: 1 })));

    const finals = await Promise.all(
      answers.map((list) => waitFinal(t.app, client.key, list[0]?.body.id ?? '', 60_000)),
    );
    expect(finals.map((o) => o.state)).toEqual(finals.map(() => 'confirmed'));
    // The sandbox's records: exactly one signed transaction per key, each buyer charged once, owning its ticket.
    expect(t.sandbox.admin.stats().transactions - signedBefore).toBe(KEYS);
    expect(
      buys.map((b, i) => (balances[i] ?? 0n) - t.sandbox.admin.balance({ address: b.buyer.address })),
    ).toEqual(buys.map((b) => b.listing.askPriceMinor));
    expect(buys.map((b) => ownerOf(t.sandbox, b.listing.eventId, b.listing.ticketId))).toEqual(
      buys.map((b) => b.buyer.address),
    );
  }, 180_000);
});
