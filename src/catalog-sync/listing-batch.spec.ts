import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListingRow } from './catalog-sync.mapper';
import { ListingBatch } from './listing-batch';

const row = (eventId: bigint, ticketId: bigint, raw = `{"t":${ticketId}}`): ListingRow => ({
  eventId,
  ticketId,
  askPriceMinor: 100n + ticketId,
  expiresAt: null,
  raw,
});
const OBSERVED = new Date('2026-12-02T10:00:00.000Z');

describe(ListingBatch.name, () => {
  describe('withTail', () => {
    it('gives the lines in (event_id, ticket_id) numeric order, each with the tail as its last columns', () => {
      const sut = new ListingBatch();
      sut.add([row(10n, 2n), row(9n, 30n)], OBSERVED);
      sut.add([row(10n, 1n, '{"a":"tab\\there"}'), row(9n, 4n)], OBSERVED);

      const text = sut.withTail('now\tnow\t7').toString('utf8');

      const at = OBSERVED.toISOString();
      expect(text).toBe(
        [
          `9\t4\t104\t\\N\t{"t":4}\t${at}\tnow\tnow\t7\n`,
          `9\t30\t130\t\\N\t{"t":30}\t${at}\tnow\tnow\t7\n`,
          `10\t1\t101\t\\N\t{"a":"tab\\\\there"}\t${at}\tnow\tnow\t7\n`,
          `10\t2\t102\t\\N\t{"t":2}\t${at}\tnow\tnow\t7\n`,
        ].join(''),
      );
    });

    it('holds every line of the batch once, whatever the order added, and again after a reset and refill', () => {
      const keys = fc.uniqueArray(
        fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
        { minLength: 1, maxLength: 40, selector: ([e, t]) => `${e}:${t}` },
      );
      const sut = new ListingBatch();
      fc.assert(
        fc.property(keys, fc.string({ maxLength: 300 }), (pairs, padding) => {
          sut.reset();
          sut.add(
            pairs.map(([e, t]) => row(e, t, JSON.stringify({ padding }))),
            OBSERVED,
          );
          const lines = sut.withTail('x').toString('utf8').split('\n');
          expect(lines.pop()).toBe('');
          // The same lines as the batch's own text, each with the tail, and keyed in ascending order.
          const own = sut.data.toString('utf8').split('\n').slice(0, -1);
          expect([...lines].sort()).toEqual(own.map((line) => `${line}\tx`).sort());
          const order = lines.map((line) => line.split('\t').slice(0, 2).map(BigInt));
          for (let i = 1; i < order.length; i++) {
            const [[e0, t0], [e1, t1]] = [order[i - 1], order[i]];
            expect(e0 < e1 || (e0 === e1 && t0 < t1)).toBe(true);
          }
        }),
      );
    });
  });
});
