import { describe, expect, it } from 'vitest';
import { cancel, failure, json, signedBody, stubHarness } from './upstream-client.support';

describe('UpstreamClient pages, identifiers and inputs (stub servers)', () => {
  const { stub, client } = stubHarness();

  describe('pagination', () => {
    it('passes the cursor back byte-exact (encoded once) with the same filters on every page', async () => {
      const weird = 'a+b/c=d e%25&x?y#z~ü.';
      const server = await stub((req, res, _body, hit) =>
        json(res, 200, {
          items: [{ event_id: String(hit), ticket_id: '1', ask_price_minor: '5' }],
          next_cursor: hit === 1 ? weird : null,
        }),
      );
      const t = client(server);
      const pages = [];
      for await (const page of t.client.walkActiveListings({ limit: 3, eventId: 18446744073709551615n }))
        pages.push(page);
      expect(pages.map((p) => [p.page, p.itemsSoFar])).toEqual([
        [1, 1],
        [2, 2],
      ]);
      const urls = server.hits.map((h) => new URL(h.url, server.url));
      expect(urls[1].searchParams.get('cursor')).toBe(weird);
      expect(server.hits[1].url).toContain(`cursor=${encodeURIComponent(weird)}`);
      for (const url of urls) {
        expect(url.searchParams.get('eventId')).toBe('18446744073709551615');
        expect(url.searchParams.get('limit')).toBe('3');
      }
      expect(urls[0].searchParams.has('cursor')).toBe(false);
    });

    it('detects a cursor that comes back (A → B → A) instead of looping forever', async () => {
      const server = await stub((_req, res, _body, hit) =>
        json(res, 200, {
          items: [{ event_id: '1', name: 'n', start_at: 's' }],
          next_cursor: hit % 2 === 1 ? 'A' : 'B',
        }),
      );
      const t = client(server);
      const error = await failure(async () => {
        for await (const page of t.client.walkUpcomingEvents({ limit: 1 }))
          expect(page.page).toBeLessThan(10);
      });
      expect(error.code).toBe('BAD_RESPONSE');
      expect(server.hits).toHaveLength(3);
    });

    it('detects a page with items that returns its own cursor', async () => {
      const server = await stub((_req, res) =>
        json(res, 200, { items: [{ event_id: '1', name: 'n', start_at: 's' }], next_cursor: 'same' }),
      );
      const t = client(server);
      const error = await failure(async () => {
        for await (const page of t.client.walkUpcomingEvents()) expect(page.page).toBeLessThan(10);
      });
      expect(error.code).toBe('BAD_RESPONSE');
      expect(server.hits).toHaveLength(2);
    });

    it('an empty page that hands back the cursor it was given is a loop: BAD_RESPONSE at once', async () => {
      const server = await stub((_req, res) => json(res, 200, { items: [], next_cursor: 'c1' }));
      const t = client(server);
      const error = await failure(async () => {
        for await (const page of t.client.walkUpcomingEvents()) expect(page.page).toBeLessThan(10);
      });
      expect(error.code).toBe('BAD_RESPONSE');
      expect(error.message).toMatch(/already used/);
      // First page (no cursor) → c1; second page (cursor c1) → c1 again: stop, no third request.
      expect(server.hits).toHaveLength(2);
    });

    it('an empty-string next_cursor is a cursor: sent back as `cursor=`, the walk stops only on null', async () => {
      const script = [
        { items: [{ event_id: '1', ticket_id: '1', ask_price_minor: '5' }], next_cursor: '' },
        { items: [{ event_id: '2', ticket_id: '2', ask_price_minor: '6' }], next_cursor: null },
      ];
      const server = await stub((_req, res, _body, hit) => json(res, 200, script[hit - 1]));
      const t = client(server);
      const pages = [];
      for await (const page of t.client.walkActiveListings({ limit: 1 })) pages.push(page);
      expect(pages.map((p) => [p.page, p.nextCursor, p.items.map((i) => i.eventId)])).toEqual([
        [1, '', [1n]],
        [2, null, [2n]],
      ]);
      expect(server.hits.map((h) => h.url)).toEqual([
        '/indexer/listings/active?limit=1',
        '/indexer/listings/active?limit=1&cursor=',
      ]);
    });

    it('continues through empty pages until next_cursor is null', async () => {
      const script = [
        { items: [{ event_id: '1', name: 'a', start_at: 's' }], next_cursor: 'p2' },
        { items: [], next_cursor: 'p3' },
        { items: [], next_cursor: 'p4' },
        { items: [{ event_id: '2', name: 'b', start_at: 's' }], next_cursor: null },
      ];
      const server = await stub((_req, res, _body, hit) => json(res, 200, script[hit - 1]));
      const t = client(server);
      const ids: (bigint | null)[] = [];
      for await (const page of t.client.walkUpcomingEvents({ limit: 1 }))
        ids.push(...page.items.map((i) => i.eventId));
      expect(ids).toEqual([1n, 2n]);
      expect(server.hits).toHaveLength(4);
    });
  });

  describe('precision', () => {
    it('refuses a JSON integer identifier beyond 2^53-1 (BAD_RESPONSE) instead of rounding it', async () => {
      const server = await stub((_req, res) =>
        json(
          res,
          200,
          '{"items":[{"event_id":9007199254740993,"name":"x","start_at":"s"}],"next_cursor":null}',
        ),
      );
      const error = await failure(() => client(server).client.listUpcomingEvents());
      expect(error.code).toBe('BAD_RESPONSE');
      expect(error.message).toContain('event_id');
    });

    it('keeps a big integer in an unknown field exactly', async () => {
      const server = await stub((_req, res) =>
        json(
          res,
          200,
          '{"items":[{"event_id":"7","name":"x","start_at":"s","seq":123456789012345678901}],"next_cursor":null}',
        ),
      );
      const page = await client(server).client.listUpcomingEvents();
      expect(JSON.stringify(page.items[0].raw)).toContain('"seq":"123456789012345678901"');
    });

    it('sends identifiers as exact decimal strings', async () => {
      const server = await stub((_req, res) => json(res, 200, signedBody));
      await client(server).client.signUserTransaction('subject/with space', cancel, 'order-1');
      expect(server.hits[0].url).toBe('/wallets/users/subject%2Fwith%20space/signatures');
      expect(server.hits[0].body).toContain(
        '"event_id":"18446744073709551615","ticket_id":"9007199254740993"',
      );
    });
  });

  describe('inputs the contract forbids', () => {
    it('are refused as REJECTED with 0 attempts: a rejected promise, never a synchronous throw', async () => {
      const server = await stub((_req, res) => json(res, 200, { items: [], next_cursor: null }));
      const t = client(server);
      const calls: (() => Promise<unknown>)[] = [
        () => t.client.listUpcomingEvents({ limit: 0 }),
        () => t.client.listActiveListings({ limit: 1.5 }),
        () => t.client.listActiveListings({ eventId: -1n }),
        () => t.client.listActiveListings({ eventId: 2n ** 64n }),
        // A lone surrogate cannot be sent byte-exact (encodeURIComponent throws URIError on it).
        () => t.client.listUpcomingEvents({ cursor: 'abc\ud800' }),
        () => t.client.signUserTransaction('sub\udc00ject', cancel, 'order-1'),
      ];
      for (const call of calls) {
        let pending: Promise<unknown> | undefined;
        expect(() => {
          pending = call();
        }).not.toThrow();
        const error = await failure(() => pending ?? Promise.resolve());
        expect([error.code, error.attempts]).toEqual(['REJECTED', 0]);
      }
      const walk = await failure(async () => {
        for await (const page of t.client.walkActiveListings({ limit: -5 })) expect(page).toBeUndefined();
      });
      expect([walk.code, walk.attempts]).toEqual(['REJECTED', 0]);
      expect(server.hits).toHaveLength(0);
    });
  });

  it('signs with the subject path-encoded once', async () => {
    const server = await stub((_req, res) => json(res, 200, signedBody));
    await client(server).client.signIntegratorTransaction('a b/c', cancel, 'order-2');
    expect(server.hits[0].url).toBe('/wallets/integrators/a%20b%2Fc/signatures');
  });
});
