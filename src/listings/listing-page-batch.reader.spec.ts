import { describe, expect, it, vi } from 'vitest';
import { listingsPageShape } from '../catalog-sync/catalog-mirror.repository';
import type { ListingRow, ListingsQuery } from '../catalog-sync/catalog-mirror.types';
import { listingRow } from '../../test/support/listing-row';
import { LISTING_BATCH_MAX_KEYS } from './listing-batch.reader';
import { ListingPageBatchReader } from './listing-page-batch.reader';

/** A page's rows named after its query, so each answer shows which query it belongs to. */
function rowsFor(query: ListingsQuery): ListingRow[] {
  return [listingRow(query.eventId ?? 'all', `${query.sort}:${query.after?.[0] ?? 'first'}:${query.limit}`)];
}

function mirror(fail = false) {
  const readOne = vi.fn<(query: ListingsQuery) => Promise<ListingRow[]>>(async (query: ListingsQuery) =>
    rowsFor(query),
  );
  const readMany = vi.fn<(queries: readonly ListingsQuery[]) => Promise<ListingRow[][]>>(
    async (queries: readonly ListingsQuery[]) => {
      if (fail) throw new Error('statement failed');
      return queries.map(rowsFor);
    },
  );
  return {
    readOne,
    readMany,
    sut: new ListingPageBatchReader({ listingsPage: readOne, listingsPages: readMany, listingsPageShape }),
  };
}

const page = (
  eventId: string | undefined,
  key?: string,
  sort: ListingsQuery['sort'] = 'price_asc',
): ListingsQuery => ({
  sort,
  eventId,
  limit: 20,
  ...(key === undefined ? {} : { after: [key, eventId ?? '1', '9'] as const }),
});

describe(ListingPageBatchReader.name, () => {
  it('answers pages of one shape asked in the same turn with one statement, each its own rows', async () => {
    const { sut, readOne, readMany } = mirror();
    const queries = [page('1', '10'), page('1', '20'), page('2', '30')];
    const answers = await Promise.all(queries.map((q) => sut.read(q)));
    expect(answers).toEqual(queries.map(rowsFor));
    expect(readMany).toHaveBeenCalledTimes(1);
    expect(readMany.mock.calls[0]?.[0]).toEqual(queries);
    expect(readOne).not.toHaveBeenCalled();
  });

  it('sends one statement per shape: sort, filters and with or without a cursor', async () => {
    const { sut, readOne, readMany } = mirror();
    const queries = [
      page('1', '10'),
      page('1'),
      page('1', '20'),
      page('1', '2026-01-01T00:00:00.000000Z', 'newest'),
      { ...page('1', '30'), minPrice: '5' },
      page('1'),
    ];
    const answers = await Promise.all(queries.map((q) => sut.read(q)));
    expect(answers).toEqual(queries.map(rowsFor));
    // price_asc with a cursor (2) and first pages (2) batched; the newest page and the filtered one alone.
    expect(readMany).toHaveBeenCalledTimes(2);
    expect(readOne).toHaveBeenCalledTimes(2);
  });

  it('reads a lone page with the plain statement, and again on the next turn (nothing kept)', async () => {
    const { sut, readOne, readMany } = mirror();
    await sut.read(page('1', '10'));
    await sut.read(page('1', '10'));
    expect(readOne).toHaveBeenCalledTimes(2);
    expect(readMany).not.toHaveBeenCalled();
  });

  it('never batches pages across events (their plan depends on the values)', async () => {
    const { sut, readOne, readMany } = mirror();
    await Promise.all([sut.read(page(undefined, '10')), sut.read(page(undefined, '20'))]);
    expect(readOne).toHaveBeenCalledTimes(2);
    expect(readMany).not.toHaveBeenCalled();
  });

  it(`splits a burst into statements of at most ${LISTING_BATCH_MAX_KEYS} pages`, async () => {
    const { sut, readMany } = mirror();
    const queries = Array.from({ length: LISTING_BATCH_MAX_KEYS + 3 }, (_, i) => page('1', String(i)));
    expect(await Promise.all(queries.map((q) => sut.read(q)))).toEqual(queries.map(rowsFor));
    expect(readMany.mock.calls.map((c) => c[0].length)).toEqual([LISTING_BATCH_MAX_KEYS, 3]);
  });

  it('fails every page of a failed statement', async () => {
    const { sut } = mirror(true);
    const results = await Promise.allSettled([sut.read(page('1', '1')), sut.read(page('1', '2'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
