import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptParams, batch, schemaErrors, TestSandbox } from './sandbox.harness';

/**
 * The OpenAPI file must be precise enough to catch a drifting upstream: real sandbox responses pass, and
 * each mutation that breaks the contract fails.
 */
describe('OpenAPI description of the upstream', () => {
  let sut: TestSandbox;
  let signed: Record<string, unknown>;
  let submitted: Record<string, unknown>;
  let listing: Record<string, unknown>;
  let event: Record<string, unknown>;
  let purchase: Record<string, unknown>;
  beforeAll(async () => {
    sut = await TestSandbox.start();
    const [first] = await sut.firstListings(1);
    listing = first;
    event = (
      (await sut.get('/indexer/events/upcoming?limit=1')).json() as { items: Record<string, unknown>[] }
    ).items[0];
    signed = (
      await sut.sign('users', 'o', 'oa', batch('accept_offer_v2', [acceptParams(sut, first, 'o')]))
    ).json();
    submitted = (await sut.submit({ signedTransaction: signed.signedTransaction })).json();
    purchase = (await sut.get('/claim_wallets/purchase-status?idempotency-key=oa')).json();
  });
  afterAll(() => sut.close());

  it('accepts the real responses', () => {
    expect(schemaErrors('SignedTransaction', signed)).toEqual([]);
    expect(schemaErrors('SubmissionResult', submitted)).toEqual([]);
    expect(schemaErrors('ListingItem', listing)).toEqual([]);
    expect(schemaErrors('EventItem', event)).toEqual([]);
    expect(schemaErrors('PurchaseStatus', purchase)).toEqual([]);
  });

  it.each<[string, string, () => unknown]>([
    ['signed transaction with an extra field', 'SignedTransaction', () => ({ ...signed, extra: 1 })],
    ['signed transaction missing message', 'SignedTransaction', () => ({ ...signed, message: undefined })],
    [
      '63-hex custodial id',
      'SignedTransaction',
      () => ({ ...signed, custodialTransactionId: 'a'.repeat(63) }),
    ],
    ['empty signedTransaction', 'SignedTransaction', () => ({ ...signed, signedTransaction: '' })],
    ['unknown submission status', 'SubmissionResult', () => ({ ...submitted, status: 'done' })],
    ['empty failureReason', 'SubmissionResult', () => ({ ...submitted, failureReason: '' })],
    ['submission result with an extra field', 'SubmissionResult', () => ({ ...submitted, slot: 1 })],
    [
      'listing price beyond u64',
      'ListingItem',
      () => ({ ...listing, ask_price_minor: '18446744073709551616' }),
    ],
    ['listing price as an unsafe integer', 'ListingItem', () => ({ ...listing, ask_price_minor: 2 ** 53 })],
    ['listing price as text "null"', 'ListingItem', () => ({ ...listing, ask_price_minor: 'null' })],
    ['listing without ask_price_minor', 'ListingItem', () => ({ ...listing, ask_price_minor: undefined })],
    ['event id negative', 'EventItem', () => ({ ...event, event_id: '-1' })],
    ['event without start_at', 'EventItem', () => ({ ...event, start_at: undefined })],
    ['page without next_cursor', 'ListingPage', () => ({ items: [] })],
    ['purchase status unknown state', 'PurchaseStatus', () => ({ ...purchase, status: 'done' })],
    ['u64 with a space', 'U64', () => ' 1'],
    ['i64 below range', 'I64', () => '-9223372036854775809'],
    ['batch with empty params', 'InstructionBatch', () => batch('accept_offer_v2', [])],
    ['batch with unknown instruction', 'InstructionBatch', () => batch('nope', [{}])],
  ])('rejects %s', (_name, schema, value) => {
    expect(schemaErrors(schema, JSON.parse(JSON.stringify(value())))).not.toEqual([]);
  });

  it('accepts the documented request shapes', () => {
    expect(
      schemaErrors('InstructionBatch', batch('accept_offer_v2', [acceptParams(sut, listing as never, 'o')])),
    ).toEqual([]);
    expect(
      schemaErrors('SubmissionRequest', {
        signedTransaction: signed.signedTransaction,
        additionalSignatures: [],
      }),
    ).toEqual([]);
    expect(schemaErrors('ListingItem', { ...listing, event_id: null, ticket_id: null, extra: true })).toEqual(
      [],
    );
    expect(schemaErrors('SubmissionResult', { ...submitted, status: null })).toEqual([]);
  });
});
