import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listingsPageShape, listingsStatement } from './catalog-mirror.repository';
import { LISTING_SORTS, type ListingsQuery } from './catalog-mirror.types';

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);

const query: fc.Arbitrary<ListingsQuery> = fc.record(
  {
    sort: fc.constantFrom(...LISTING_SORTS),
    eventId: u64,
    minPrice: u64,
    maxPrice: u64,
    limit: fc.integer({ min: 1, max: 200 }),
    after: fc.tuple(u64, u64, u64),
  },
  { requiredKeys: ['sort', 'limit'] },
);

describe(listingsPageShape.name, () => {
  it("is equal for two pages exactly when their statements' texts are (what the read batches group by)", () => {
    fc.assert(
      fc.property(query, query, (a, b) => {
        const sameShape = listingsPageShape(a) === listingsPageShape(b);
        const sameText = listingsStatement(a).text === listingsStatement(b).text;
        expect(sameShape).toBe(sameText);
      }),
      { numRuns: 2_000 },
    );
  });
});
