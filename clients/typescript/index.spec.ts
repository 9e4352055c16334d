import { describe, expect, it } from 'vitest';
import { createMarketplaceClient, type MarketplaceClient, type MarketplaceClientOptions } from './index';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A fetch that records what it is sent and answers from a script (a Response, or an Error it throws). */
function fakeFetch(script: (Response | Error)[]): {
  fetch: (request: Request) => Promise<Response>;
  sent: Sent[];
} {
  const sent: Sent[] = [];
  return {
    sent,
    async fetch(request) {
      sent.push({
        method: request.method,
        url: request.url,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      });
      const next = script.shift();
      if (next === undefined) throw new Error('the fake fetch ran out of answers');
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const ORDER = {
  buyer_subject: 'user-1',
  buyer_address: 'Buyer1111111111111111111111111111111111111',
  event_id: '100000',
  ticket_id: '1',
  expected_price_minor: '25000000',
};
const ERROR = { error: { code: 'UPSTREAM_UNAVAILABLE', message: 'Upstream unavailable', requestId: 'r1' } };
const TYPE_ERROR = new TypeError('fetch failed');

function setup(script: (Response | Error)[], options: Partial<MarketplaceClientOptions> = {}) {
  const fake = fakeFetch(script);
  const waits: number[] = [];
  let keys = 0;
  const sut = createMarketplaceClient({
    baseUrl: 'http://127.0.0.1:3000',
    apiKey: 'trb_live_test',
    fetch: fake.fetch,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    newIdempotencyKey: () => `fresh-${++keys}`,
    ...options,
  });
  return { sut, sent: fake.sent, waits };
}

// A caller's key on an operation outside IDEMPOTENT_OPERATIONS is sent, but the service does not deduplicate
// by it: a second send could create a second endpoint.
const callerKeyed = (sut: MarketplaceClient) =>
  sut.POST('/v1/webhooks/endpoints', {
    body: { url: 'https://marketplace.example/hooks' },
    headers: { 'Idempotency-Key': 'caller-1' },
  });

describe(createMarketplaceClient.name, () => {
  it('sends the key as a Bearer token and no Idempotency-Key on a read', async () => {
    const { sut, sent } = setup([json(200, { id: 'c1', name: 'n', scopes: [], binding: null })]);
    const { data } = await sut.GET('/v1/me');
    expect(data?.name).toBe('n');
    expect(sent).toHaveLength(1);
    expect(sent[0].url).toBe('http://127.0.0.1:3000/v1/me');
    expect(sent[0].headers.authorization).toBe('Bearer trb_live_test');
    expect(sent[0].headers['idempotency-key']).toBeUndefined();
  });

  it('gives an operation that takes an Idempotency-Key a fresh one when the caller gives none', async () => {
    const { sut, sent } = setup([json(202, { id: 'o1' }), json(202, { id: 'o2' })]);
    await sut.POST('/v1/orders', { body: ORDER });
    await sut.POST('/v1/orders', { body: ORDER });
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['fresh-1', 'fresh-2']);
  });

  it("keeps the caller's Idempotency-Key", async () => {
    const { sut, sent } = setup([json(202, { id: 'o1' })]);
    await sut.POST('/v1/orders', { body: ORDER, params: { header: { 'Idempotency-Key': 'checkout-42' } } });
    expect(sent[0].headers['idempotency-key']).toBe('checkout-42');
  });

  it('sets no Idempotency-Key on an operation that does not read one', async () => {
    const { sut, sent } = setup([json(201, { id: 'w1' })]);
    await sut.POST('/v1/webhooks/endpoints', { body: { url: 'https://marketplace.example/hooks' } });
    expect(sent[0].headers['idempotency-key']).toBeUndefined();
  });

  it('retries a keyed POST on 5xx with the same key and the same body until it succeeds', async () => {
    const { sut, sent, waits } = setup([json(503, ERROR), json(502, ERROR), json(202, { id: 'o1' })]);
    const { data, response } = await sut.POST('/v1/orders', { body: ORDER });
    expect(response.status).toBe(202);
    expect(data?.id).toBe('o1');
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((s) => s.headers['idempotency-key']))).toEqual(new Set(['fresh-1']));
    expect(sent.map((s) => JSON.parse(s.body) as unknown)).toEqual([ORDER, ORDER, ORDER]);
    expect(waits).toHaveLength(2);
  });

  it('retries on a network error with the same key', async () => {
    const { sut, sent } = setup([TYPE_ERROR, json(202, { id: 'o1' })]);
    const { data } = await sut.POST('/v1/orders', { body: ORDER });
    expect(data?.id).toBe('o1');
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['fresh-1', 'fresh-1']);
  });

  it.each([400, 401, 403, 404, 409, 422, 429])('never retries a %i', async (status) => {
    const { sut, sent } = setup([json(status, ERROR, { 'retry-after': '1' }), json(202, { id: 'o1' })]);
    const { error, response } = await sut.POST('/v1/orders', { body: ORDER });
    expect(response.status).toBe(status);
    expect(error?.error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(sent).toHaveLength(1);
  });

  it('stops after `retries` retries and answers the last 5xx as the error', async () => {
    const { sut, sent } = setup([json(500, ERROR), json(502, ERROR), json(503, ERROR)], { retries: 2 });
    const { error, response } = await sut.POST('/v1/orders', { body: ORDER });
    expect(response.status).toBe(503);
    expect(error?.error.requestId).toBe('r1');
    expect(sent).toHaveLength(3);
  });

  it('throws the last network error when every attempt fails', async () => {
    const { sut, sent } = setup([TYPE_ERROR, TYPE_ERROR], { retries: 1 });
    await expect(sut.POST('/v1/orders', { body: ORDER })).rejects.toBe(TYPE_ERROR);
    expect(sent).toHaveLength(2);
  });

  it('backs off with full jitter, doubling up to the maximum', async () => {
    const { sut, waits } = setup([json(500, ERROR), json(500, ERROR), json(500, ERROR), json(500, ERROR)], {
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 300,
    });
    await sut.GET('/v1/orders');
    // random() = 0.5 of min(300, 100 × 2^n)
    expect(waits).toEqual([50, 100, 150]);
  });

  it('waits as long as Retry-After says (seconds or a date), capped by retryMaxDelayMs', async () => {
    const later = new Date(Date.now() + 60_000).toUTCString();
    const { sut, waits } = setup(
      [
        json(503, ERROR, { 'retry-after': '2' }),
        json(503, ERROR, { 'retry-after': later }),
        json(200, { items: [], next_cursor: null }),
      ],
      { retryMaxDelayMs: 5000 },
    );
    await sut.GET('/v1/orders');
    expect(waits).toEqual([2000, 5000]);
  });

  it('retries a read on 5xx', async () => {
    const { sut, sent } = setup([json(502, ERROR), json(200, { items: [], next_cursor: null })]);
    const { data } = await sut.GET('/v1/orders');
    expect(data?.items).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it('never retries a POST without an Idempotency-Key (a second send could act twice)', async () => {
    const { sut, sent } = setup([json(502, ERROR), json(201, { id: 'w1' })]);
    const { response } = await sut.POST('/v1/webhooks/endpoints', {
      body: { url: 'https://marketplace.example/hooks' },
    });
    expect(response.status).toBe(502);
    expect(sent).toHaveLength(1);
  });

  it('never retries a caller-keyed POST the service does not deduplicate by key, after a 5xx', async () => {
    const { sut, sent } = setup([json(502, ERROR), json(201, { id: 'w1' })]);
    const { response } = await callerKeyed(sut);
    expect(response.status).toBe(502);
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['caller-1']);
  });

  it('never retries a caller-keyed POST the service does not deduplicate by key, after a network error', async () => {
    const { sut, sent } = setup([TYPE_ERROR, json(201, { id: 'w1' })]);
    await expect(callerKeyed(sut)).rejects.toBe(TYPE_ERROR);
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['caller-1']);
  });

  it("retries a caller-keyed POST to an operation that reads the key, with the caller's key", async () => {
    const { sut, sent } = setup([json(503, ERROR), json(202, { id: 'o1' })]);
    const { data } = await sut.POST('/v1/orders', {
      body: ORDER,
      params: { header: { 'Idempotency-Key': 'checkout-7' } },
    });
    expect(data?.id).toBe('o1');
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['checkout-7', 'checkout-7']);
  });

  it('retries nothing with retries: 0', async () => {
    const { sut, sent } = setup([json(503, ERROR), json(202, { id: 'o1' })], { retries: 0 });
    const { response } = await sut.POST('/v1/orders', { body: ORDER });
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(1);
  });
});
