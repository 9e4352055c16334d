import { describe, expect, it } from 'vitest';
import { parseJsonSafely } from './safe-json';
import {
  ResponseShapeError,
  parseEventsPage,
  parseListingsPage,
  parseProtocolConfig,
  parsePurchaseStatus,
  parseSignedTransaction,
  parseSubmissionResult,
} from './responses';

const signed = {
  custodialTransactionId: 'a'.repeat(64),
  signerAddress: 'S',
  feePayerAddress: 'F',
  signedTransaction: 'AQID',
  message: 'AQ==',
  signature: 'sig',
  feePayerSignature: 'fsig',
  requiredSigners: ['S', 'F'],
  recentBlockhash: 'bh',
};

describe('upstream response validation', () => {
  it('accepts an exact signed transaction', () => {
    expect(parseSignedTransaction(signed)).toEqual(signed);
  });

  it.each([
    ['an extra field', { ...signed, extra: 1 }],
    ['a missing field', { ...signed, recentBlockhash: undefined }],
    ['a short id', { ...signed, custodialTransactionId: 'abc' }],
    ['a non-Base64 transaction', { ...signed, signedTransaction: 'not base64!' }],
    ['an empty message', { ...signed, message: '' }],
    ['non-string signers', { ...signed, requiredSigners: [1] }],
  ])('is strict about signed transactions: rejects %s', (_name, body) => {
    const clean = JSON.parse(JSON.stringify(body)) as unknown;
    expect(() => parseSignedTransaction(clean)).toThrow(ResponseShapeError);
  });

  it('accepts every submission status and null, with an optional failureReason', () => {
    for (const status of ['processing', 'confirmed', 'landed_with_error', 'expired', null]) {
      const body = { custodialTransactionId: 'F'.repeat(64), transactionSignature: 't', status };
      expect(parseSubmissionResult(body).status).toBe(status);
    }
    const failed = {
      custodialTransactionId: '0'.repeat(64),
      transactionSignature: 't',
      status: 'landed_with_error',
      failureReason: 'x',
    };
    expect(parseSubmissionResult(failed).failureReason).toBe('x');
  });

  it.each([
    ['an unknown status', { status: 'done' }],
    ['a missing status', { status: undefined }],
    ['an empty failureReason', { failureReason: '' }],
    ['an extra field', { x: 1 }],
  ])('is strict about submission results: rejects %s', (_name, patch) => {
    const body = JSON.parse(
      JSON.stringify({
        custodialTransactionId: 'f'.repeat(64),
        transactionSignature: 't',
        status: 'processing',
        ...patch,
      }),
    ) as unknown;
    expect(() => parseSubmissionResult(body)).toThrow(ResponseShapeError);
  });

  it('is tolerant about event items: unknown fields kept in raw, null and missing ids are null', () => {
    const page = parseEventsPage(
      parseJsonSafely(
        '{"items":[{"event_id":"18446744073709551615","name":"A","start_at":"x","venue":"V"},' +
          '{"event_id":null,"name":"B","start_at":"y"},{"name":"C","start_at":"z"},{"event_id":42,"name":"","start_at":"w"}],' +
          '"next_cursor":null,"extra":true}',
      ),
    );
    expect(page.items.map((i) => i.eventId)).toEqual([18446744073709551615n, null, null, 42n]);
    expect(page.items[0].raw.venue).toBe('V');
    expect(page.nextCursor).toBeNull();
  });

  it.each([
    [
      'a lossy JSON integer id',
      '{"items":[{"event_id":9007199254740993,"name":"A","start_at":"x"}],"next_cursor":null}',
    ],
    ['the text "null" as id', '{"items":[{"event_id":"null","name":"A","start_at":"x"}],"next_cursor":null}'],
    ['a missing name', '{"items":[{"event_id":"1","start_at":"x"}],"next_cursor":null}'],
    ['a missing next_cursor', '{"items":[]}'],
    ['a numeric next_cursor', '{"items":[],"next_cursor":1}'],
    ['items not an array', '{"items":{},"next_cursor":null}'],
  ])('rejects an events page with %s', (_name, text) => {
    expect(() => parseEventsPage(parseJsonSafely(text))).toThrow(ResponseShapeError);
  });

  it('accepts an empty-string next_cursor: a cursor like any other (contract 2.6), only null ends a walk', () => {
    expect(parseEventsPage(parseJsonSafely('{"items":[],"next_cursor":""}')).nextCursor).toBe('');
  });

  it('checks listing prices and identifiers', () => {
    const page = parseListingsPage(
      parseJsonSafely(
        '{"items":[{"event_id":"1","ticket_id":null,"ask_price_minor":"18446744073709551615","seller":"s"}],"next_cursor":"c"}',
      ),
    );
    expect(page.items[0]).toMatchObject({
      eventId: 1n,
      ticketId: null,
      askPriceMinor: 18446744073709551615n,
    });
    expect(() =>
      parseListingsPage(
        parseJsonSafely('{"items":[{"event_id":"1","ask_price_minor":null}],"next_cursor":null}'),
      ),
    ).toThrow(ResponseShapeError);
    expect(() =>
      parseListingsPage(
        parseJsonSafely('{"items":[{"event_id":"1","ask_price_minor":"1.5"}],"next_cursor":null}'),
      ),
    ).toThrow(ResponseShapeError);
  });

  it('checks stablecoin_decimals for a sane integer', () => {
    expect(parseProtocolConfig({ stablecoin_decimals: 6, stablecoin_mint: 'm' }).stablecoinDecimals).toBe(6);
    expect(parseProtocolConfig({ stablecoin_decimals: '9' }).stablecoinDecimals).toBe(9);
    for (const bad of [-1, 19, 6.5, '6.0', null, undefined, 'six']) {
      expect(() => parseProtocolConfig({ stablecoin_decimals: bad })).toThrow(ResponseShapeError);
    }
  });

  it('reads a purchase status tolerantly', () => {
    expect(parsePurchaseStatus({ status: 'confirmed', x: 1 })).toEqual({
      status: 'confirmed',
      raw: { status: 'confirmed', x: 1 },
    });
    expect(parsePurchaseStatus({}).status).toBeNull();
    expect(() => parsePurchaseStatus({ status: 3 })).toThrow(ResponseShapeError);
    expect(() => parsePurchaseStatus([])).toThrow(ResponseShapeError);
  });
});
