import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonParseError, UnsafeJsonInteger, parseJsonSafely } from './safe-json';
import {
  ResponseShapeError,
  parseEventsPage,
  parseListingsPage,
  parseListingsText,
  parseProtocolConfig,
  parsePurchaseStatus,
  parseSignedTransaction,
  parseSubmissionResult,
} from './responses';

/** What a decoder made of a text: its page, or its error's type and message. */
function outcome(decode: () => unknown): unknown {
  try {
    return { page: decode() };
  } catch (error) {
    return { error: (error as Error).name, message: (error as Error).message };
  }
}

const field = (key: string, value: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> =>
  fc.option(
    value.map((v) => `"${key}":${v}`),
    { freq: 6, nil: undefined },
  );

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

  describe(parseListingsText.name, () => {
    // JSON text fragments, unsafe integer literals (beyond 2^53-1, or too long for a double) included.
    const unsafe = fc
      .oneof(fc.bigInt({ min: 2n ** 53n, max: 10n ** 30n }), fc.constant(10n ** 400n))
      .map((big) => `${big}`);
    const u64Text = fc
      .oneof(fc.bigInt({ min: 0n, max: 2n ** 64n + 5n }), fc.constantFrom(0n, 10n ** 15n, 2n ** 53n + 1n))
      .map((v) => `"${v}"`);
    const badId = fc.constantFrom('null', '"1.5"', '"-1"', '""', '12', '-3', '1.5', 'true', '{}', '[]');
    const id = fc.oneof(u64Text, u64Text, badId, unsafe, fc.constantFrom('"100004"', '"100005"'));
    const other = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      unsafe,
      unsafe.map((n) => `[1,{"deep":[${n}]}]`),
    );
    const item = fc.oneof(
      {
        weight: 12,
        arbitrary: fc
          .tuple(
            field('event_id', id),
            field('ticket_id', id),
            field('ask_price_minor', id),
            field('seller', other),
            field('royalty_destinations', other),
          )
          .map((fields) => `{${fields.filter((f) => f !== undefined).join(',')}}`),
      },
      { weight: 1, arbitrary: fc.oneof(other, fc.constant('null')) },
    );
    const page = fc
      .tuple(
        fc.array(item, { maxLength: 8 }),
        fc.constantFrom('"next_cursor":null', '"next_cursor":"c"', '"next_cursor":""', '"next_cursor":7', ''),
        fc.option(other, { nil: undefined }),
      )
      .map(
        ([items, cursor, extra]) =>
          `{"items":[${items.join(',')}]${cursor === '' ? '' : `,${cursor}`}${extra === undefined ? '' : `,"extra":${extra}`}}`,
      );

    it('gives the page or the error of parseListingsPage(parseJsonSafely(text)) on any text', () => {
      fc.assert(
        fc.property(page, (text) => {
          expect(outcome(() => parseListingsText(text))).toEqual(
            outcome(() => parseListingsPage(parseJsonSafely(text))),
          );
        }),
        { numRuns: 3_000 },
      );
    });

    it('keeps unsafe integers of raw fields exact, and refuses them where a u64 is read', () => {
      const text =
        '{"items":[{"event_id":"1","ticket_id":"2","ask_price_minor":"3","extra":9007199254740993}],"next_cursor":null}';
      expect(parseListingsText(text).items[0].raw.extra).toEqual(new UnsafeJsonInteger('9007199254740993'));
      expect(() =>
        parseListingsText(
          '{"items":[{"event_id":"1","ask_price_minor":18446744073709551615}],"next_cursor":null}',
        ),
      ).toThrow('listings page.items[0].ask_price_minor JSON integer beyond');
      expect(() => parseListingsText('{"items":[')).toThrow(JsonParseError);
    });

    it('gives every item of an event the same identifier, a new one on each change', () => {
      const items = ['"7"', '"7"', '"8"', 'null', '"8"', '"07"'].map(
        (e, i) => `{"event_id":${e},"ticket_id":"${i}","ask_price_minor":"1"}`,
      );
      const { items: decoded } = parseListingsText(`{"items":[${items.join(',')}],"next_cursor":null}`);
      expect(decoded.map((l) => l.eventId)).toEqual([7n, 7n, 8n, null, 8n, 7n]);
      expect(decoded.map((l) => l.ticketId)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    });
  });
});
