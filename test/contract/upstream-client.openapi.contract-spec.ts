import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { UPSTREAM_DEFAULTS } from '../../src/upstream/upstream.options';
import { encodeInstructionBatch, encodeSubmission } from '../../src/upstream/wire/requests';
import { parseSignedTransaction, parseSubmissionResult } from '../../src/upstream/wire/responses';
import { SUBMISSION_STATUSES } from '../../src/upstream/upstream.types';
import type { InstructionBatch } from '../../src/upstream/upstream.types';
import { schemaErrors, upstreamOpenApi, upstreamSchema } from '../support/upstream-openapi';
import { makeClient, type TestClient } from './upstream-client.support';

// The project's OpenAPI description of the upstream (written with the sandbox). The client's types are
// written from the contract text; this file checks that what the client sends and accepts matches it.
const openapi = upstreamOpenApi;
const schema = upstreamSchema;
const problems = schemaErrors;
/** The wire form of parsed data: JSON text again (UnsafeJsonInteger → its digits, bigint never appears in raw). */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

const signedSample = {
  custodialTransactionId: 'AB'.repeat(32),
  signerAddress: 'a',
  feePayerAddress: 'b',
  signedTransaction: 'AQID',
  message: 'm',
  signature: 's',
  feePayerSignature: 'f',
  requiredSigners: ['a'],
  recentBlockhash: 'h',
};

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const i64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const address = fc.string({ minLength: 1, maxLength: 44 });
const nullableAddress = fc.option(address, { nil: null });

const batches: fc.Arbitrary<InstructionBatch> = fc.oneof(
  fc.record({
    instruction: fc.constant('cancel_listing_v1' as const),
    params: fc.uniqueArray(fc.record({ event_id: u64, ticket_id: u64, canceller: address }), {
      minLength: 1,
      maxLength: 4,
      selector: (p) => `${p.event_id}/${p.ticket_id}`,
    }),
  }),
  fc.record({
    instruction: fc.constant('list_ticket_v2' as const),
    params: fc.tuple(
      fc.record(
        {
          seller: address,
          storage_fee_payer: address,
          listing_integrator_identity: address,
          listing_integrator_authority: address,
          stablecoin_mint: address,
          event_id: u64,
          ticket_id: u64,
          ask_price_minor: u64,
          buyer_allow: nullableAddress,
          payout_ata: address,
          expires_at: i64,
          ticket_type_config: nullableAddress,
        },
        {
          requiredKeys: [
            'seller',
            'storage_fee_payer',
            'listing_integrator_identity',
            'listing_integrator_authority',
            'stablecoin_mint',
            'event_id',
            'ticket_id',
            'ask_price_minor',
            'payout_ata',
            'expires_at',
          ],
        },
      ),
    ),
  }),
  fc.record({
    instruction: fc.constant('accept_offer_v2' as const),
    params: fc.tuple(
      fc.record(
        {
          event_id: u64,
          ticket_id: u64,
          permit_version: u64,
          buyer: address,
          integrator_authority: address,
          seller_payout: address,
          royalty_destinations: fc.array(address, { maxLength: 3 }),
          ticket_type_config: nullableAddress,
          integrator_identity: address,
          stablecoin_mint: address,
        },
        {
          requiredKeys: [
            'event_id',
            'ticket_id',
            'permit_version',
            'buyer',
            'integrator_authority',
            'seller_payout',
            'royalty_destinations',
            'integrator_identity',
            'stablecoin_mint',
          ],
        },
      ),
    ),
  }),
);

describe('UpstreamClient against the OpenAPI description', () => {
  let sandbox: SandboxHandle;
  let t: TestClient;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, seed: 'upstream-client-openapi', events: 6, listings: 40 });
    t = makeClient(sandbox.url, sandbox.admin.apiKey);
  });
  afterAll(async () => {
    t.client.close();
    await sandbox.close();
  });

  it('every instruction batch the client encodes is a valid InstructionBatch', () => {
    fc.assert(
      fc.property(batches, (batch) => {
        expect(problems('InstructionBatch', JSON.parse(encodeInstructionBatch(batch)))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('the submission request the client encodes is a valid SubmissionRequest', () => {
    expect(
      problems('SubmissionRequest', JSON.parse(encodeSubmission({ signedTransaction: 'AQID' }))),
    ).toEqual([]);
    expect(
      problems(
        'SubmissionRequest',
        JSON.parse(
          encodeSubmission({
            signedTransaction: 'AQID',
            additionalSignatures: [{ address: 'a', signature: 's' }],
          }),
        ),
      ),
    ).toEqual([]);
  });

  it('the paths and parameter names the client uses are the described ones', () => {
    const params = (path: string) => (openapi.paths[path]?.get?.parameters ?? []).map((p) => p.name);
    expect(params('/indexer/events/upcoming')).toEqual(expect.arrayContaining(['limit', 'cursor']));
    expect(params(UPSTREAM_DEFAULTS.paths.activeListings)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'eventId']),
    );
    expect(openapi.paths[UPSTREAM_DEFAULTS.paths.protocolConfig]?.get).toBeDefined();
    expect(params(UPSTREAM_DEFAULTS.paths.purchaseStatus)).toContain(
      UPSTREAM_DEFAULTS.paths.purchaseStatusKeyParam,
    );
    for (const wallet of ['users', 'integrators']) {
      expect(openapi.paths[`/wallets/${wallet}/{subject}/signatures`]?.post).toBeDefined();
    }
    expect(openapi.paths['/transactions/submissions']?.post).toBeDefined();
  });

  it('responses the client accepted are valid against their schemas', async () => {
    const subject = 'openapi-buyer';
    const batch: InstructionBatch = {
      instruction: 'cancel_listing_v1',
      params: [{ event_id: 1n, ticket_id: 2n, canceller: sandbox.admin.userWalletAddress(subject) }],
    };
    const signed = await t.client.signUserTransaction(subject, batch, 'openapi-key-1');
    expect(problems('SignedTransaction', wire(signed))).toEqual([]);
    const submitted = await t.client.submitTransaction({ signedTransaction: signed.signedTransaction });
    expect(problems('SubmissionResult', wire(submitted))).toEqual([]);
    const events = await t.client.listUpcomingEvents({ limit: 3 });
    expect(
      problems('EventPage', { items: wire(events.items.map((i) => i.raw)), next_cursor: events.nextCursor }),
    ).toEqual([]);
    const listings = await t.client.listActiveListings({ limit: 3 });
    expect(
      problems('ListingPage', {
        items: wire(listings.items.map((i) => i.raw)),
        next_cursor: listings.nextCursor,
      }),
    ).toEqual([]);
    expect(problems('ProtocolConfig', wire((await t.client.getProtocolConfig()).raw))).toEqual([]);
  });

  it('what the OpenAPI description allows for a signed transaction, the client accepts (and vice versa for extras)', () => {
    const sample = signedSample;
    expect(problems('SignedTransaction', sample)).toEqual([]);
    expect(parseSignedTransaction(sample)).toEqual(sample);
    expect(schema('SignedTransaction')({ ...sample, extra: 1 })).toBe(false);
    expect(() => parseSignedTransaction({ ...sample, extra: 1 })).toThrow(/unexpected field/);
  });

  it('the strict response shapes are exactly the described ones (fields, required, status values)', () => {
    const { schemas } = openapi.components;
    expect(schemas.SubmissionStatus.enum).toEqual([...SUBMISSION_STATUSES, null]);
    const signed = Object.keys(parseSignedTransaction({ ...signedSample }));
    expect(signed.toSorted()).toEqual(Object.keys(schemas.SignedTransaction.properties ?? {}).toSorted());
    expect(signed.toSorted()).toEqual([...(schemas.SignedTransaction.required ?? [])].toSorted());
    const result = parseSubmissionResult({
      custodialTransactionId: 'ab'.repeat(32),
      transactionSignature: 's',
      status: 'expired',
      failureReason: 'gone',
    });
    expect(Object.keys(result).toSorted()).toEqual(
      Object.keys(schemas.SubmissionResult.properties ?? {}).toSorted(),
    );
    expect(problems('SubmissionResult', result)).toEqual([]);
  });
});
