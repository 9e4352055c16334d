import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import type { UpstreamClient } from '../../src/upstream/upstream.client';
import { UpstreamError } from '../../src/upstream/upstream.error';
import type { InstructionBatch } from '../../src/upstream/upstream.types';
import { waitUntil } from '../support/wait';
import { failure, makeClient, type TestClient } from './upstream-client.support';

function attemptLines(t: TestClient, operation: string): Record<string, unknown>[] {
  return t.logs.lines
    .map((line) => JSON.parse(line) as { upstream?: Record<string, unknown> })
    .filter((l) => l.upstream?.operation === operation && l.upstream.attempt !== undefined)
    .map((l) => l.upstream as Record<string, unknown>);
}

describe('UpstreamClient against the sandbox', () => {
  let sandbox: SandboxHandle;
  const clients: UpstreamClient[] = [];
  let seq = 0;

  const client = (overrides: Parameters<typeof makeClient>[2] = {}, key?: string): TestClient => {
    const t = makeClient(sandbox.url, key ?? sandbox.admin.apiKey, overrides);
    clients.push(t.client);
    return t;
  };

  const cancelBatch = (subject: string): InstructionBatch => ({
    instruction: 'cancel_listing_v1',
    params: [
      {
        event_id: 100_000n + BigInt(++seq),
        ticket_id: BigInt(seq),
        canceller: sandbox.admin.userWalletAddress(subject),
      },
    ],
  });

  beforeAll(async () => {
    sandbox = await startSandbox({
      port: 0,
      seed: 'upstream-client-contract',
      events: 12,
      listings: 120,
      landingDelayMs: 60_000,
    });
  });
  afterEach(() => {
    sandbox.admin.clearFaults();
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => sandbox.close());

  describe('status classes (exact attempts)', () => {
    it('401: never retried, UNAUTHORIZED, one attempt, readiness verdict names the key', async () => {
      const t = client({}, 'trk_test_not_a_real_key');
      const error = await failure(() => t.client.listUpcomingEvents({ limit: 1 }));
      expect([error.code, error.status, error.attempts]).toEqual(['UNAUTHORIZED', 401, 1]);
      expect(attemptLines(t, 'listUpcomingEvents')).toHaveLength(1);
      const verdict = await t.client.verifyKeyCached();
      expect(verdict).toMatchObject({ ok: false, code: 'UNAUTHORIZED' });
      expect(verdict.ok ? '' : verdict.reason).toMatch(/UPSTREAM_API_KEY/);
    });

    it('a production key against the sandbox is a 401 (other environment), never retried', async () => {
      const t = client({}, 'trk_live_0123456789');
      const verdict = await t.client.verifyKey();
      expect(verdict).toMatchObject({ ok: false, code: 'UNAUTHORIZED', status: 401 });
      expect(attemptLines(t, 'verifyKey')).toHaveLength(1);
    });

    it('403: never retried, FORBIDDEN, names the operation', async () => {
      const t = client({}, sandbox.admin.readOnlyApiKey);
      const error = await failure(() =>
        t.client.signUserTransaction('buyer-403', cancelBatch('buyer-403'), 'key-403'),
      );
      expect([error.code, error.status, error.attempts]).toEqual(['FORBIDDEN', 403, 1]);
      expect(error.message).toContain('signUserTransaction');
      expect(attemptLines(t, 'signUserTransaction')).toHaveLength(1);
    });

    it('other 4xx: 400 REJECTED, 404 NOT_FOUND and 409 CONFLICT, each after exactly one attempt', async () => {
      const t = client();
      const rejected = await failure(() => t.client.listUpcomingEvents({ limit: 1_000_000 }));
      expect([rejected.code, rejected.status, rejected.attempts]).toEqual(['REJECTED', 400, 1]);
      const missing = await failure(() => t.client.getPurchaseStatus('never-used-key'));
      expect([missing.code, missing.status, missing.attempts]).toEqual(['NOT_FOUND', 404, 1]);
      await t.client.signUserTransaction('buyer-409', cancelBatch('buyer-409'), 'key-409');
      const conflict = await failure(() =>
        t.client.signUserTransaction('buyer-409', cancelBatch('buyer-409'), 'key-409'),
      );
      expect([conflict.code, conflict.status, conflict.attempts]).toEqual(['CONFLICT', 409, 1]);
      expect(t.clock.sleeps).toEqual([]);
    });

    it('5xx: retried with backoff, succeeds on the third attempt after two injected 503s', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'events', kind: 'error', status: 503, times: 2 });
      const page = await t.client.listUpcomingEvents({ limit: 2 });
      expect(page.items).toHaveLength(2);
      expect(attemptLines(t, 'listUpcomingEvents').map((l) => l.status)).toEqual(['503', '503', '200']);
      // random()=0.5, base 100: full jitter gives 50 then 100.
      expect(t.clock.sleeps).toEqual([50, 100]);
    });

    it('5xx on every attempt: UNAVAILABLE after exactly maxAttempts', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'protocolConfig', kind: 'error', status: 500, body: 'text' });
      const error = await failure(() => t.client.getProtocolConfig());
      expect([error.code, error.status, error.attempts]).toEqual(['UNAVAILABLE', 500, 3]);
      expect(attemptLines(t, 'getProtocolConfig')).toHaveLength(3);
    });

    it('429 with Retry-After in seconds: waits exactly that long, then succeeds, and lowers the rate', async () => {
      const t = client();
      sandbox.admin.addFault({
        operation: 'listings',
        kind: 'rate_limit',
        retryAfter: 'seconds',
        retryAfterSeconds: 2,
        times: 1,
      });
      await t.client.listActiveListings({ limit: 5 });
      expect(attemptLines(t, 'listActiveListings').map((l) => l.status)).toEqual(['429', '200']);
      expect(t.clock.sleeps[0]).toBe(2_000);
      expect(await t.ratePerSecond()).toBe(25);
    });

    it('429 with Retry-After as an HTTP date: waits until then', async () => {
      const t = client();
      sandbox.admin.addFault({
        operation: 'listings',
        kind: 'rate_limit',
        retryAfter: 'http-date',
        retryAfterSeconds: 3,
        times: 1,
      });
      await t.client.listActiveListings({ limit: 5 });
      expect(attemptLines(t, 'listActiveListings')).toHaveLength(2);
      // An HTTP date has one-second resolution.
      expect(t.clock.sleeps[0]).toBeGreaterThanOrEqual(1_000);
      expect(t.clock.sleeps[0]).toBeLessThanOrEqual(3_000);
    });

    it('429 without Retry-After: backs off', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'events', kind: 'rate_limit', retryAfter: 'none', times: 1 });
      await t.client.listUpcomingEvents({ limit: 1 });
      expect(t.clock.sleeps).toEqual([50]);
    });

    it('429 with a Retry-After beyond the cap: not retried early, RATE_LIMITED carries the wait', async () => {
      const t = client();
      sandbox.admin.addFault({
        operation: 'events',
        kind: 'rate_limit',
        retryAfter: 'seconds',
        retryAfterSeconds: 600,
        times: 1,
      });
      const error = await failure(() => t.client.listUpcomingEvents({ limit: 1 }));
      expect([error.code, error.status, error.attempts, error.retryAfterMs]).toEqual([
        'RATE_LIMITED',
        429,
        1,
        600_000,
      ]);
    });

    it('a hanging upstream ends in TIMEOUT within the deadline and leaves no socket open', async () => {
      const t = client({
        timeouts: { readMs: 150, signMs: 150, submitMs: 150, deadlineMs: 600 },
        retry: { maxAttempts: 10, baseDelayMs: 10, maxDelayMs: 20, retryAfterCapMs: 1_000 },
      });
      sandbox.admin.addFault({ operation: 'events', kind: 'hang' });
      const started = Date.now();
      const error = await failure(() => t.client.listUpcomingEvents({ limit: 1 }));
      const elapsed = Date.now() - started;
      expect(error.code).toBe('TIMEOUT');
      expect(error.attempts).toBeGreaterThanOrEqual(3);
      expect(elapsed).toBeLessThan(600 + 150);
      // Aborted requests destroy their sockets (closed within a tick or two), none returns to the pool.
      await waitUntil(() => t.connectionStats().inUse === 0, 500, 10);
      expect(t.connectionStats().idle).toBe(0);
    });

    it('a connection reset is retried (network error) and succeeds', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'events', kind: 'reset', times: 1 });
      await t.client.listUpcomingEvents({ limit: 1 });
      expect(attemptLines(t, 'listUpcomingEvents').map((l) => l.status)).toEqual(['network', '200']);
    });

    it('a malformed 200 body is BAD_RESPONSE, not retried', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'events', kind: 'malformed_json', times: 1 });
      const error = await failure(() => t.client.listUpcomingEvents({ limit: 1 }));
      expect([error.code, error.attempts]).toEqual(['BAD_RESPONSE', 1]);
    });
  });

  describe('signing and submission', () => {
    it('"executed but the response lost": retried with the same key, exactly one transaction upstream', async () => {
      const t = client();
      const before = sandbox.admin.stats().transactions;
      sandbox.admin.addFault({ operation: 'signUser', kind: 'response_lost', times: 1 });
      const signed = await t.client.signUserTransaction(
        'buyer-lost',
        cancelBatch('buyer-lost'),
        'order-lost-1',
      );
      const attempts = attemptLines(t, 'signUserTransaction');
      expect(attempts.map((l) => l.status)).toEqual(['network', '200']);
      expect(sandbox.admin.stats().transactions).toBe(before + 1);
      expect(sandbox.admin.transaction(signed.custodialTransactionId)).toBeDefined();
    });

    it('a signing that times out on every attempt is TIMEOUT with outcomeUnknown, never a failure', async () => {
      const t = client({ timeouts: { readMs: 100, signMs: 100, submitMs: 100, deadlineMs: 400 } });
      sandbox.admin.addFault({ operation: 'signUser', kind: 'hang' });
      const error = await failure(() =>
        t.client.signUserTransaction('buyer-hang', cancelBatch('buyer-hang'), 'order-hang-1'),
      );
      expect(error.code).toBe('TIMEOUT');
      expect(error.outcomeUnknown).toBe(true);
      await waitUntil(() => t.connectionStats().inUse === 0, 500, 10);
    });

    it('submits a signed transaction, retrying a 502 with the same bytes; status null is kept as null', async () => {
      const t = client();
      const signed = await t.client.signUserTransaction(
        'buyer-submit',
        cancelBatch('buyer-submit'),
        'order-submit-1',
      );
      sandbox.admin.addFault({ operation: 'submit', kind: 'error', status: 502, times: 1 });
      const first = await t.client.submitTransaction({ signedTransaction: signed.signedTransaction });
      expect(first.custodialTransactionId).toBe(signed.custodialTransactionId);
      expect(first.status).toBe('processing');
      expect(attemptLines(t, 'submitTransaction').map((l) => l.status)).toEqual(['502', '200']);
      sandbox.admin.addFault({ operation: 'submit', kind: 'status_null', times: 1 });
      const again = await t.client.submitTransaction({ signedTransaction: signed.signedTransaction });
      expect(again.status).toBeNull();
    });

    it('refuses a request that breaks the contract before sending it (0 attempts)', async () => {
      const t = client();
      const error = await failure(() =>
        t.client.signUserTransaction('buyer-bad', cancelBatch('buyer-bad'), ''),
      );
      expect([error.code, error.attempts]).toEqual(['REJECTED', 0]);
      expect(attemptLines(t, 'signUserTransaction')).toHaveLength(0);
    });
  });

  describe('pagination and identifiers', () => {
    it('walks every listing exactly once across empty middle pages', async () => {
      const t = client();
      const seen = new Set<string>();
      const pages: { size: number; asked: string | undefined; next: string | null }[] = [];
      let last = 0;
      let asked: string | undefined;
      let error: unknown;
      try {
        for await (const page of t.client.walkActiveListings({ limit: 7 })) {
          if (page.page === 2)
            sandbox.admin.addFault({ operation: 'listings', kind: 'empty_page', times: 2 });
          pages.push({ size: page.itemsOnPage, asked, next: page.nextCursor });
          asked = page.nextCursor ?? undefined;
          for (const item of page.items) {
            const key = `${item.eventId}/${item.ticketId}`;
            expect(seen.has(key)).toBe(false);
            seen.add(key);
          }
          last = page.itemsSoFar;
        }
      } catch (caught) {
        error = caught;
      }
      // The sandbox's empty_page fault either hands back a fresh cursor (as a real server would) or the
      // cursor it was asked with. The second is a loop by contract 4.8: the walk must stop right there.
      const repeats = pages[2]?.next === pages[2]?.asked;
      const loopDetected = error instanceof UpstreamError && error.code === 'BAD_RESPONSE';
      expect({
        loopDetected,
        otherError: loopDetected ? undefined : error,
        pages: repeats ? pages.length : 'all',
        emptyPages: pages.slice(2, repeats ? 3 : 4).map((p) => p.size),
        items: seen.size,
      }).toEqual({
        loopDetected: repeats,
        otherError: undefined,
        pages: repeats ? 3 : 'all',
        emptyPages: repeats ? [0] : [0, 0],
        items: repeats ? seen.size : sandbox.admin.stats().activeListings,
      });
      expect(last).toBe(seen.size);
    });

    it('walks one event with the same filter on every page', async () => {
      const t = client();
      const first = await t.client.listActiveListings({ limit: 1 });
      const eventId = first.items[0].eventId as bigint;
      const ids = new Set<bigint | null>();
      for await (const page of t.client.walkActiveListings({ limit: 2, eventId }))
        for (const i of page.items) ids.add(i.eventId);
      expect([...ids]).toEqual([eventId]);
    });

    it('keeps null identifiers as explicit nulls and decodes JSON-number identifiers exactly', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'listings', kind: 'null_ids', fraction: 1, times: 1 });
      const page = await t.client.listActiveListings({ limit: 20 });
      expect(page.items.every((i) => i.eventId === null || i.ticketId === null)).toBe(true);
      expect(page.items.some((i) => i.raw.event_id === null || i.raw.ticket_id === null)).toBe(true);
      sandbox.admin.addFault({ operation: 'listings', kind: 'u64_as_number', times: 1 });
      const asNumbers = await t.client.listActiveListings({ limit: 5 });
      const asStrings = await t.client.listActiveListings({ limit: 5 });
      expect(asNumbers.items.map((i) => [i.eventId, i.ticketId, i.askPriceMinor])).toEqual(
        asStrings.items.map((i) => [i.eventId, i.ticketId, i.askPriceMinor]),
      );
      expect(typeof asNumbers.items[0].raw.event_id).toBe('number');
    });

    it('keeps unknown fields of items in raw (tolerant), reads protocol config', async () => {
      const t = client();
      sandbox.admin.addFault({ operation: 'events', kind: 'extra_fields', times: 1 });
      const page = await t.client.listUpcomingEvents({ limit: 2 });
      expect(page.items[0].raw.x_sandbox_extra).toBeDefined();
      const config = await t.client.getProtocolConfig();
      expect(config.stablecoinDecimals).toBe(6);
      expect(config.stablecoinMint).toBe(sandbox.admin.stablecoinMint);
    });

    it('looks up a purchase by its idempotency key', async () => {
      const t = client();
      const status = await failure(() => t.client.getPurchaseStatus('unknown-purchase'));
      expect(status.code).toBe('NOT_FOUND');
    });
  });

  describe('key check', () => {
    it('verifyKey: 200 means the key works; read-only keys pass too', async () => {
      expect((await client().client.verifyKey()).ok).toBe(true);
      expect((await client({}, sandbox.admin.readOnlyApiKey).client.verifyKey()).ok).toBe(true);
    });

    it('verifyKeyCached reuses a verdict, and a 401 seen meanwhile is not hidden by it', async () => {
      const t = client({ keyCheckTtlMs: 60_000 });
      const first = await t.client.verifyKeyCached();
      await t.client.verifyKeyCached();
      expect(attemptLines(t, 'verifyKey')).toHaveLength(1);
      expect(first.ok).toBe(true);
    });
  });
});
