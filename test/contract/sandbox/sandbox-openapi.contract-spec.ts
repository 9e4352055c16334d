import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptParams, batch, openapiResponseErrors, schemaErrors, TestSandbox } from './sandbox.harness';

/**
 * The OpenAPI file must be precise enough to catch a drifting upstream: real sandbox responses pass, and
 * each mutation that breaks the contract fails.
 */
const check = (status: number, contentType: string | null, text: string): unknown[] =>
  openapiResponseErrors('POST', '/wallets/integrators/x/signatures', { status, contentType, text });

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

  it.each<[string, string, string, number, string | null, () => string]>([
    ['an undeclared status', 'POST', '/transactions/submissions', 409, 'application/json', () => '{}'],
    ['an empty 200', 'GET', '/indexer/protocol-config', 200, null, () => ''],
    ['a 200 in plain text', 'GET', '/indexer/events/upcoming', 200, 'text/plain', () => 'ok'],
    [
      'a 200 that breaks its schema',
      'POST',
      '/wallets/users/alice/signatures',
      200,
      'application/json; charset=utf-8',
      () => JSON.stringify({ ...signed, extra: 1 }),
    ],
    ['an error body of an undeclared type', 'GET', '/indexer/events/upcoming', 503, 'text/html', () => '<p>'],
  ])('flags %s as a response the OpenAPI file does not allow', (_name, method, path, status, type, text) => {
    const response = { status, contentType: type, text: text() };
    expect(openapiResponseErrors(method, path, response)).not.toEqual([]);
  });

  it('allows empty, plain-text and JSON error bodies and ignores paths outside the contract', () => {
    expect(check(401, null, '')).toEqual([]);
    expect(check(401, 'text/plain; charset=utf-8', 'nope')).toEqual([]);
    expect(check(422, 'application/json', '{"error":"unprocessable","message":"dup"}')).toEqual([]);
    expect(check(200, 'application/json', JSON.stringify(signed))).toEqual([]);
    expect(
      openapiResponseErrors('GET', '/__sandbox/state', { status: 418, contentType: null, text: '' }),
    ).toEqual([]);
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
