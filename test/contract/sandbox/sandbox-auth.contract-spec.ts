import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptParams, batch, TestSandbox } from './sandbox.harness';

const READS = [
  '/indexer/events/upcoming?limit=1',
  '/indexer/listings/active?limit=1',
  '/indexer/protocol-config',
];

/** Every contract operation (part 5: the key applies to all of them), with a body where it takes one. */
const OPERATIONS: [method: string, path: string][] = [
  ...READS.map((path): [string, string] => ['GET', path]),
  ['GET', '/claim_wallets/purchase-status?idempotency-key=k'],
  ['POST', '/wallets/users/alice/signatures'],
  ['POST', '/wallets/integrators/acme/signatures'],
  ['POST', '/transactions/submissions'],
];

describe('sandbox authentication and permissions', () => {
  let sut: TestSandbox;
  beforeAll(async () => {
    sut = await TestSandbox.start();
  });
  afterAll(() => sut.close());

  const call = (method: string, path: string, key: string | null): ReturnType<TestSandbox['request']> =>
    sut.request(method, path, {
      key,
      headers: { 'idempotency-key': 'auth-check' },
      ...(method === 'POST' ? { body: { signedTransaction: 'AAAA' } } : {}),
    });

  it.each(OPERATIONS)(
    'answers %s %s with 401 and a JSON body when the key is missing',
    async (method, path) => {
      const res = await call(method, path, null);
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ error: 'unauthorized' });
    },
  );

  it.each(OPERATIONS)('answers %s %s with an empty 401 for an incomplete key', async (method, path) => {
    const res = await call(method, path, sut.admin.apiKey.slice(0, -3));
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
  });

  it.each(OPERATIONS)('answers %s %s with a plain-text 401 for a production key', async (method, path) => {
    const res = await call(method, path, 'trk_live_0123456789abcdef0123456789abcdef');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/another environment/);
  });

  it.each(READS)('lets the read-only key read %s', async (path) => {
    expect((await sut.get(path, sut.admin.readOnlyApiKey)).status).toBe(200);
  });

  it('refuses signing, submission and purchase status to the read-only key with 403', async () => {
    const [listing] = await sut.firstListings(1);
    const body = batch('accept_offer_v2', [acceptParams(sut, listing, 'ro')]);
    const key = sut.admin.readOnlyApiKey;
    expect((await sut.sign('users', 'ro', 'k', body, key)).status).toBe(403);
    expect((await sut.sign('integrators', 'ro', 'k', body, key)).status).toBe(403);
    expect((await sut.submit({ signedTransaction: 'AAAA' }, key)).status).toBe(403);
    expect((await sut.get('/claim_wallets/purchase-status?idempotency-key=k', key)).status).toBe(403);
  });

  it('checks the key before looking at the body', async () => {
    const res = await sut.request('POST', '/transactions/submissions', { key: 'nope', rawBody: '{not json' });
    expect(res.status).toBe(401);
  });

  it('checks the key and the permission before reading an oversized body', async () => {
    const rawBody = `{"signedTransaction":"${'A'.repeat(1_100_000)}"}`;
    const send = (key: string | null): ReturnType<TestSandbox['request']> =>
      sut.request('POST', '/transactions/submissions', { key, rawBody });
    expect((await send(null)).status).toBe(401);
    expect((await send('trk_test_not_a_key_at_all_0000')).status).toBe(401);
    expect((await send(sut.admin.readOnlyApiKey)).status).toBe(403);
    const tooLarge = await send(sut.admin.apiKey);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: 'payload_too_large' });
  });

  it('refuses every operation to a key given twice', async () => {
    const res = await fetch(`${sut.handle.url}/indexer/events/upcoming`, {
      headers: [
        ['x-api-key', sut.admin.apiKey],
        ['x-api-key', sut.admin.apiKey],
      ],
    });
    expect(res.status).toBe(401);
  });
});
