import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptParams, batch, TestSandbox } from './sandbox.harness';

const READS = [
  '/indexer/events/upcoming?limit=1',
  '/indexer/listings/active?limit=1',
  '/indexer/protocol-config',
];

describe('sandbox authentication and permissions', () => {
  let sut: TestSandbox;
  beforeAll(async () => {
    sut = await TestSandbox.start();
  });
  afterAll(() => sut.close());

  it.each(READS)('answers %s with 401 and a JSON body when the key is missing', async (path) => {
    const res = await sut.get(path, null);
    expect(res.status).toBe(401);
    expect(res.json()).toMatchObject({ error: 'unauthorized' });
  });

  it.each(READS)('answers %s with an empty 401 for an incomplete key', async (path) => {
    const res = await sut.get(path, sut.admin.apiKey.slice(0, -3));
    expect(res.status).toBe(401);
    expect(res.text).toBe('');
  });

  it.each(READS)('answers %s with a plain-text 401 for a production key', async (path) => {
    const res = await sut.get(path, 'trk_live_0123456789abcdef0123456789abcdef');
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
