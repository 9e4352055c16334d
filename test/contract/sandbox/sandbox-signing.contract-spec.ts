import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingView } from '../../../src/sandbox/admin.types';
import { acceptParams, batch, expectSchema, TestSandbox } from './sandbox.harness';

describe('sandbox signing operations', () => {
  let sut: TestSandbox;
  let listing: ListingView;
  let n = 0;
  const key = (): string => `key-${++n}`;
  beforeAll(async () => {
    sut = await TestSandbox.start();
    [listing] = await sut.firstListings(1);
  });
  afterAll(() => sut.close());

  const accept = (overrides: Record<string, unknown> = {}): unknown =>
    batch('accept_offer_v2', [{ ...acceptParams(sut, listing, 'alice'), ...overrides }]);

  it('returns a signed transaction that decodes and verifies with @solana/web3.js', async () => {
    const res = await sut.sign('users', 'alice', key(), accept());
    expect(res.status).toBe(200);
    const body = res.json() as Record<string, string & string[]>;
    expectSchema('SignedTransaction', body);
    const tx = Transaction.from(Buffer.from(body.signedTransaction, 'base64'));
    expect(tx.verifySignatures()).toBe(true);
    expect(tx.feePayer?.toBase58()).toBe(body.feePayerAddress);
    expect(tx.recentBlockhash).toBe(body.recentBlockhash);
    expect(body.signerAddress).toBe(sut.admin.userWalletAddress('alice'));
    expect(tx.serializeMessage().toString('base64')).toBe(body.message);
    const sigOf = (address: string): string =>
      bs58.encode(tx.signatures.find((s) => s.publicKey.toBase58() === address)?.signature as Buffer);
    expect(sigOf(body.signerAddress)).toBe(body.signature);
    expect(sigOf(body.feePayerAddress)).toBe(body.feePayerSignature);
    expect(body.requiredSigners).toEqual(tx.signatures.map((s) => s.publicKey.toBase58()));
    expect(body.custodialTransactionId).toBe(
      createHash('sha256').update(tx.serializeMessage()).digest('hex'),
    );
  });

  it('signs list and cancel batches for users and integrators', async () => {
    const seller = sut.admin.userWalletAddress('bob');
    const list = batch('list_ticket_v2', [
      {
        seller,
        storage_fee_payer: seller,
        listing_integrator_identity: listing.listing_integrator_identity,
        listing_integrator_authority: listing.listing_integrator_authority,
        stablecoin_mint: listing.stablecoin_mint,
        event_id: '100000',
        ticket_id: 77,
        ask_price_minor: '18446744073709551615',
        buyer_allow: null,
        payout_ata: seller,
        expires_at: '-9223372036854775808',
      },
    ]);
    const user = await sut.sign('users', 'bob', key(), list);
    expect(user.status).toBe(200);
    expectSchema('SignedTransaction', user.json());
    const cancel = batch('cancel_listing_v1', [
      { event_id: '1', ticket_id: '2', canceller: sut.admin.integratorWalletAddress('acme') },
    ]);
    const integrator = await sut.sign('integrators', 'acme', key(), cancel);
    expect(integrator.status).toBe(200);
    expect(integrator.json().signerAddress).toBe(sut.admin.integratorWalletAddress('acme'));
  });

  it.each([
    ['JSON integer 2^53-1', '9007199254740991', 200],
    ['JSON integer 2^53', '9007199254740992', 400],
    ['JSON integer 2^63', '9223372036854775808', 400],
    ['JSON fraction', '1.5', 400],
    ['exponent notation', '1e3', 400],
    ['negative integer', '-1', 400],
    ['string with leading zeros', '"007"', 200],
    ['string with a space', '" 1"', 400],
    ['string 2^64-1', '"18446744073709551615"', 200],
    ['string 2^64', '"18446744073709551616"', 400],
    ['negative string', '"-1"', 400],
    ['boolean', 'true', 400],
    ['null', 'null', 400],
  ])('validates permit_version given as %s', async (_name, raw, status) => {
    const text = JSON.stringify(accept({ permit_version: '__P__' })).replace('"__P__"', raw);
    const res = await sut.request('POST', '/wallets/users/alice/signatures', {
      headers: { 'idempotency-key': key() },
      rawBody: text,
    });
    expect(res.status).toBe(status);
  });

  it.each([
    ['empty params', () => batch('accept_offer_v2', [])],
    ['unknown instruction', () => batch('buy_v9', [{}])],
    ['missing platformInstructions', () => ({})],
    ['unknown top-level field', () => ({ ...(accept() as object), extra: 1 })],
    ['unknown param field', () => accept({ price: '1' })],
    ['missing buyer', () => accept({ buyer: undefined })],
    ['address that is not base58', () => accept({ seller_payout: 'not-an-address' })],
    ['ticket_type_config of the wrong type', () => accept({ ticket_type_config: 5 })],
    ['array body', () => []],
  ])('rejects %s with 400', async (_name, body) => {
    const res = await sut.sign('users', 'alice', key(), body());
    expect(res.status).toBe(400);
    expectSchema('ErrorBody', res.json());
  });

  it('rejects a batch that repeats an (event_id, ticket_id) pair with 422', async () => {
    const params = acceptParams(sut, listing, 'alice');
    const res = await sut.sign(
      'users',
      'alice',
      key(),
      batch('accept_offer_v2', [params, { ...params, permit_version: '9' }]),
    );
    expect(res.status).toBe(422);
  });

  it('rejects a batch too large for one transaction with 422', async () => {
    const params = Array.from({ length: 30 }, (_, i) => ({
      ...acceptParams(sut, listing, 'alice'),
      ticket_id: String(i),
      seller_payout: sut.admin.userWalletAddress(`p${i}`),
    }));
    expect((await sut.sign('users', 'alice', key(), batch('accept_offer_v2', params))).status).toBe(422);
  });

  it('refuses with 403 to sign for a wallet that is not the subject', async () => {
    const res = await sut.sign('users', 'mallory', key(), accept());
    expect(res.status).toBe(403);
  });

  it('validates the idempotency-key header and the subject', async () => {
    expect((await sut.sign('users', 'alice', undefined, accept())).status).toBe(400);
    expect((await sut.sign('users', 'alice', 'x'.repeat(256), accept())).status).toBe(400);
    expect((await sut.sign('users', 'alice', 'x'.repeat(255), accept())).status).toBe(200);
    expect(
      (
        await sut.request('POST', '/wallets/users//signatures', {
          headers: { 'idempotency-key': key() },
          body: accept(),
        })
      ).status,
    ).toBe(400);
  });

  it('rejects malformed JSON and non-JSON bodies', async () => {
    const headers = { 'idempotency-key': key() };
    expect(
      (await sut.request('POST', '/wallets/users/alice/signatures', { headers, rawBody: '{"a":' })).status,
    ).toBe(400);
    expect(
      (await sut.request('POST', '/wallets/users/alice/signatures', { headers, rawBody: '{"a":1,"a":2}' }))
        .status,
    ).toBe(400);
    const text = await sut.request('POST', '/wallets/users/alice/signatures', {
      headers: { ...headers, 'content-type': 'text/plain' },
      rawBody: 'hi',
    });
    expect(text.status).toBe(415);
  });

  it('replays the same response for the same key and payload, and 409s a different payload', async () => {
    const k = key();
    const first = await sut.sign('users', 'alice', k, accept());
    const again = await sut.sign('users', 'alice', k, accept({ permit_version: 1 }));
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const changed = await sut.sign('users', 'alice', k, accept({ permit_version: '2' }));
    expect(changed.status).toBe(409);
    const otherSubject = await sut.sign('integrators', 'alice', k, accept());
    expect(otherSubject.status).toBe(403);
  });

  it('creates one transaction for concurrent requests with one key', async () => {
    const before = sut.admin.stats().transactions;
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => sut.sign('users', 'alice', k, accept())),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.json().custodialTransactionId)).size).toBe(1);
    expect(sut.admin.stats().transactions).toBe(before + 1);
  });

  it('gives distinct transactions to distinct keys with the same payload', async () => {
    const a = (await sut.sign('users', 'alice', key(), accept())).json();
    const b = (await sut.sign('users', 'alice', key(), accept())).json();
    expect(a.custodialTransactionId).not.toBe(b.custodialTransactionId);
  });

  it('scopes idempotency keys per API key', async () => {
    const other = await TestSandbox.start({
      extraApiKeys: [
        {
          name: 'second',
          key: 'trk_test_second_integration_key',
          permissions: ['read', 'sign', 'submit', 'purchase'],
        },
      ],
    });
    try {
      const [l] = await other.firstListings(1);
      const body = batch('accept_offer_v2', [acceptParams(other, l, 'alice')]);
      const first = (await other.sign('users', 'alice', 'shared', body)).json();
      const second = await other.sign('users', 'alice', 'shared', body, 'trk_test_second_integration_key');
      expect(second.status).toBe(200);
      expect(second.json().custodialTransactionId).not.toBe(first.custodialTransactionId);
      const lookup = await other.request('GET', '/claim_wallets/purchase-status?idempotency-key=shared', {
        key: 'trk_test_second_integration_key',
      });
      expect(lookup.json().custodial_transaction_id).toBe(second.json().custodialTransactionId);
    } finally {
      await other.close();
    }
  });
});
