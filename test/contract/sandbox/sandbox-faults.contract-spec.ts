import { request } from 'node:http';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { ListingView } from '../../../src/sandbox/admin.types';
import {
  acceptParams,
  batch,
  expectSchema,
  openapiResponseErrors,
  schemaErrors,
  TestSandbox,
  type HttpResult,
} from './sandbox.harness';

/** A GET that reports a dropped connection as 'reset' instead of throwing. */
function rawGet(
  url: string,
  apiKey: string,
  timeoutMs = 2000,
): Promise<{ status: number; body: string } | 'reset' | 'timeout'> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { 'x-api-key': apiKey } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve('reset'));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('reset'));
    req.end();
  });
}

/** How an error response carried its body: JSON that fits ErrorBody, plain text, or nothing. */
function bodyKind(res: HttpResult): 'json' | 'text' | 'empty' | 'other' {
  if (res.text === '') return 'empty';
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/plain')) return 'text';
  return type.startsWith('application/json') && schemaErrors('ErrorBody', res.json()).length === 0
    ? 'json'
    : 'other';
}

describe('sandbox fault injection', () => {
  let sut: TestSandbox;
  beforeAll(async () => {
    sut = await TestSandbox.start({ landingDelayMs: 0 });
  });
  afterAll(() => sut.close());
  afterEach(() => sut.admin.clearFaults());

  const listings = (query = 'limit=5'): Promise<HttpResult> => sut.get(`/indexer/listings/active?${query}`);

  it.each([
    [500, 'json'],
    [502, 'text'],
    [503, 'empty'],
  ] as const)('fails the next call with %s and a %s body, then recovers', async (status, body) => {
    sut.admin.addFault({ operation: 'listings', kind: 'error', status, body, times: 1 });
    const failed = await listings();
    expect(failed.status).toBe(status);
    expect(bodyKind(failed)).toBe(body);
    expect((await listings()).status).toBe(200);
  });

  it('fails exactly the next N calls of one operation only', async () => {
    sut.admin.addFault({ operation: 'events', kind: 'error', times: 2 });
    expect((await listings()).status).toBe(200);
    expect((await sut.get('/indexer/events/upcoming')).status).toBe(503);
    expect((await sut.get('/indexer/events/upcoming')).status).toBe(503);
    expect((await sut.get('/indexer/events/upcoming')).status).toBe(200);
  });

  it('sends 429 with Retry-After in seconds or as an HTTP date', async () => {
    sut.admin.addFault({ operation: 'protocolConfig', kind: 'rate_limit', retryAfterSeconds: 7, times: 1 });
    const seconds = await sut.get('/indexer/protocol-config');
    expect(seconds.status).toBe(429);
    expect(seconds.headers.get('retry-after')).toBe('7');
    sut.admin.addFault({
      operation: 'protocolConfig',
      kind: 'rate_limit',
      retryAfter: 'http-date',
      retryAfterSeconds: 30,
      times: 1,
    });
    const date = await sut.get('/indexer/protocol-config');
    const at = Date.parse(date.headers.get('retry-after') ?? '');
    expect(at - Date.now()).toBeGreaterThan(20_000);
  });

  it('adds latency', async () => {
    sut.admin.addFault({ operation: 'listings', kind: 'latency', latencyMs: 150, times: 1 });
    const started = Date.now();
    expect((await listings()).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('hangs until the client gives up, and resets connections', async () => {
    sut.admin.addFault({ operation: 'listings', kind: 'hang', times: 1 });
    expect(await rawGet(`${sut.handle.url}/indexer/listings/active`, sut.admin.apiKey, 300)).toBe('timeout');
    sut.admin.addFault({ operation: 'listings', kind: 'reset', times: 1 });
    expect(await rawGet(`${sut.handle.url}/indexer/listings/active`, sut.admin.apiKey)).toBe('reset');
  });

  it('returns malformed JSON with a 200, which the OpenAPI check catches', async () => {
    sut.admin.addFault({ operation: 'listings', kind: 'malformed_json', times: 1 });
    const path = '/indexer/listings/active?limit=5';
    const res = await sut.request('GET', path, { unchecked: true });
    expect(res.status).toBe(200);
    expect(() => res.json()).toThrow(SyntaxError);
    const contentType = res.headers.get('content-type');
    expect(openapiResponseErrors('GET', path, { status: 200, contentType, text: res.text })).toEqual([
      'body is not JSON',
    ]);
  });

  it('executes a signing but loses the response; the retry with the same key returns the same transaction', async () => {
    const [listing] = await sut.firstListings(1);
    const body = batch('accept_offer_v2', [acceptParams(sut, listing, 'lost')]);
    const before = sut.admin.stats().transactions;
    sut.admin.addFault({ operation: 'signUser', kind: 'response_lost', times: 1 });
    await expect(sut.sign('users', 'lost', 'lost-key', body)).rejects.toThrow('fetch failed');
    expect(sut.admin.stats().transactions).toBe(before + 1);
    const retry = await sut.sign('users', 'lost', 'lost-key', body);
    expect(retry.status).toBe(200);
    expect(sut.admin.stats().transactions).toBe(before + 1);
  });

  it('serves empty pages mid-walk with fresh cursors that continue the walk where it was', async () => {
    type Page = { items: ListingView[]; next_cursor: string | null };
    const page = async (cursor: string): Promise<Page> =>
      (await listings(`limit=3&cursor=${encodeURIComponent(cursor)}`)).json() as Page;
    const first = (await listings('limit=3')).json() as Page & { next_cursor: string };
    const expected = await page(first.next_cursor);
    sut.admin.addFault({ operation: 'listings', kind: 'empty_page', times: 2 });
    const empty1 = await page(first.next_cursor);
    const empty2 = await page(empty1.next_cursor as string);
    expect([empty1.items, empty2.items]).toEqual([[], []]);
    // A real server hands out a new cursor after an empty page, never the one it was asked with.
    const cursors = [first.next_cursor, empty1.next_cursor, empty2.next_cursor];
    expect(cursors.every((c) => typeof c === 'string')).toBe(true);
    expect(new Set(cursors).size).toBe(3);
    expect(await page(empty2.next_cursor as string)).toEqual(expected);
  });

  it('nulls identifiers, adds unknown fields and sends u64 as JSON integers, all within the schema', async () => {
    sut.admin.setFaults([
      { operation: 'listings', kind: 'null_ids', fraction: 1 },
      { operation: 'listings', kind: 'extra_fields' },
      { operation: 'listings', kind: 'u64_as_number' },
    ]);
    const page = (await listings('limit=50')).json() as { items: Record<string, unknown>[] };
    expectSchema('ListingPage', page);
    expect(page.items.every((i) => i.event_id === null || i.ticket_id === null)).toBe(true);
    expect(page.items.every((i) => 'x_sandbox_extra' in i)).toBe(true);
    expect(page.items.some((i) => typeof i.ask_price_minor === 'number')).toBe(true);
  });

  it('nulls event ids and sends them as JSON integers on the events page too', async () => {
    sut.admin.addFault({ operation: 'events', kind: 'null_ids', fraction: 1, times: 1 });
    const nulled = (await sut.get('/indexer/events/upcoming?limit=20')).json() as {
      items: { event_id: unknown }[];
    };
    expect(nulled.items.map((e) => e.event_id)).toEqual(nulled.items.map(() => null));
    sut.admin.addFault({ operation: 'events', kind: 'u64_as_number', times: 1 });
    const numbers = (await sut.get('/indexer/events/upcoming?limit=20')).json() as {
      items: { event_id: unknown }[];
    };
    const kinds = new Set(numbers.items.map((e) => typeof e.event_id));
    // Small ids become numbers; ids past 2^53 stay strings, since a JSON integer cannot carry them.
    expect(kinds).toEqual(new Set(['number', 'string']));
  });

  it('never adds unknown fields to the closed signed-transaction and submission-result shapes', async () => {
    const listing = sut.admin.seedListing({
      eventId: sut.admin.createEvent().eventId,
      seller: { kind: 'user', subject: 'closed-seller' },
      askPriceMinor: 10n,
    });
    sut.admin.setFaults([{ operation: '*', kind: 'extra_fields' }]);
    const body = batch('accept_offer_v2', [acceptParams(sut, listing, 'closed')]);
    const signed = (await sut.sign('users', 'closed', 'closed-key', body)).json();
    expect(Object.keys(signed)).toHaveLength(9);
    const result = (await sut.submit({ signedTransaction: signed.signedTransaction })).json();
    expect(Object.keys(result).sort()).toEqual(['custodialTransactionId', 'status', 'transactionSignature']);
    const config = (await sut.get('/indexer/protocol-config')).json();
    expect(config).toHaveProperty('x_sandbox_extra');
  });

  it('executes a submission but loses the response; re-submitting reports the current status', async () => {
    const listing = sut.admin.seedListing({
      eventId: sut.admin.createEvent().eventId,
      seller: { kind: 'user', subject: 'lost-seller' },
      askPriceMinor: 10n,
    });
    const body = batch('accept_offer_v2', [acceptParams(sut, listing, 'lost-buyer')]);
    const signed = (await sut.sign('users', 'lost-buyer', 'lost-submit', body)).json();
    sut.admin.addFault({ operation: 'submit', kind: 'response_lost', times: 1 });
    await expect(sut.submit({ signedTransaction: signed.signedTransaction })).rejects.toThrow('fetch failed');
    expect(sut.admin.transaction(signed.custodialTransactionId as string)?.state).toBe('confirmed');
    const again = await sut.submit({ signedTransaction: signed.signedTransaction });
    expect(again.json()).toMatchObject({
      custodialTransactionId: signed.custodialTransactionId,
      status: 'confirmed',
    });
    expect(sut.admin.listing(BigInt(listing.event_id), BigInt(listing.ticket_id))).toBeUndefined();
  });

  it('changes inventory between pages', async () => {
    const before = sut.admin.stats();
    sut.admin.addFault({ operation: 'listings', kind: 'inventory_churn', churn: 4, times: 1 });
    await listings();
    const after = sut.admin.stats();
    expect(after.listings).toBe(before.listings + 4);
    expect(after.activeListings).toBe(before.activeListings);
  });

  it('returns a null status from submission', async () => {
    const [listing] = await sut.firstListings(1);
    const signed = (
      await sut.sign('users', 'nul', 'nul-key', batch('accept_offer_v2', [acceptParams(sut, listing, 'nul')]))
    ).json();
    sut.admin.addFault({ operation: 'submit', kind: 'status_null', times: 1 });
    const res = await sut.submit({ signedTransaction: signed.signedTransaction });
    expect(res.json().status).toBeNull();
    expect(schemaErrors('SubmissionResult', res.json())).toEqual([]);
  });

  async function statusesUnderSeed(seed: string): Promise<number[]> {
    sut.admin.setFaults([{ operation: 'events', kind: 'error', rate: 0.5 }], seed);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await sut.get('/indexer/events/upcoming?limit=1')).status);
    return statuses;
  }

  it('reproduces probabilistic faults from their seed', async () => {
    const a = await statusesUnderSeed('repro');
    expect(a).toEqual(await statusesUnderSeed('repro'));
    expect(new Set(a)).toEqual(new Set([200, 503]));
  });

  it('controls faults over the guarded admin API', async () => {
    const admin = { 'x-sandbox-admin-key': sut.admin.adminKey };
    const put = await sut.request('PUT', '/__sandbox/faults', {
      key: null,
      headers: admin,
      body: { rules: [{ operation: '*', kind: 'error', status: 502, times: 1 }] },
    });
    expect(put.status).toBe(200);
    expect((await sut.get('/indexer/protocol-config')).status).toBe(502);
    const bad = await sut.request('PUT', '/__sandbox/faults', {
      key: null,
      headers: admin,
      body: { rules: [{ operation: 'nope', kind: 'error' }] },
    });
    expect(bad.status).toBe(400);
    const unauthorised = await sut.request('DELETE', '/__sandbox/faults', {
      key: null,
      headers: { 'x-sandbox-admin-key': 'wrong' },
    });
    expect(unauthorised.status).toBe(401);
  });
});

describe('sandbox close with a hung request', () => {
  it('closes promptly', async () => {
    const sut = await TestSandbox.start({ faults: [{ operation: 'events', kind: 'hang' }] });
    const pending = rawGet(`${sut.handle.url}/indexer/events/upcoming`, sut.admin.apiKey, 5000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await sut.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await pending).toBe('reset');
  });
});
