import { describe, expect, it, vi } from 'vitest';
import type { ListingRow } from '../catalog-sync/catalog-mirror.types';
import { listingRow } from '../../test/support/listing-row';
import { LISTING_BATCH_MAX_KEYS, ListingBatchReader } from './listing-batch.reader';

const row = (eventId: string, ticketId: string): ListingRow => listingRow(eventId, ticketId);

/** A mirror holding `stored` keys ("e/t"), with spies on both read paths. */
function mirror(stored: string[]) {
  const has = (e: string, t: string) => stored.includes(`${e}/${t}`);
  const readOne = vi.fn<(e: string, t: string) => Promise<ListingRow | undefined>>(
    async (e: string, t: string) => (has(e, t) ? row(e, t) : undefined),
  );
  const readMany = vi.fn<(keys: readonly (readonly [string, string])[]) => Promise<ListingRow[]>>(
    async (keys: readonly (readonly [string, string])[]) =>
      keys.filter(([e, t]) => has(e, t)).map(([e, t]) => row(e, t)),
  );
  return { readOne, readMany, sut: new ListingBatchReader({ listing: readOne, listingsByKey: readMany }) };
}

describe(ListingBatchReader.name, () => {
  it('answers reads asked in the same turn with one statement, each its own row or undefined', async () => {
    const { sut, readOne, readMany } = mirror(['1/1', '1/2', '7/9']);
    const answers = await Promise.all([
      sut.read('1', '2'),
      sut.read('5', '5'),
      sut.read('7', '9'),
      sut.read('1', '2'),
    ]);
    expect(answers.map((r) => r && `${r.event_id}/${r.ticket_id}`)).toEqual(['1/2', undefined, '7/9', '1/2']);
    expect(readMany).toHaveBeenCalledTimes(1);
    expect(readOne).not.toHaveBeenCalled();
  });

  it('reads a lone key with the single-row statement, and reads again on the next turn (nothing kept)', async () => {
    const { sut, readOne, readMany } = mirror(['1/1']);
    expect((await sut.read('1', '1'))?.ticket_id).toBe('1');
    expect((await sut.read('1', '1'))?.ticket_id).toBe('1');
    expect(readOne).toHaveBeenCalledTimes(2);
    expect(readMany).not.toHaveBeenCalled();
  });

  it(`splits a burst into statements of at most ${LISTING_BATCH_MAX_KEYS} keys`, async () => {
    const keys = Array.from({ length: 2 * LISTING_BATCH_MAX_KEYS + 1 }, (_, i) => String(i));
    const { sut, readOne, readMany } = mirror(keys.map((k) => `1/${k}`));
    const answers = await Promise.all(keys.map((k) => sut.read('1', k)));
    expect(answers.map((r) => r?.ticket_id)).toEqual(keys);
    expect(readMany.mock.calls.map(([batch]) => batch.length)).toEqual([
      LISTING_BATCH_MAX_KEYS,
      LISTING_BATCH_MAX_KEYS,
    ]);
    expect(readOne).toHaveBeenCalledTimes(1);
  });

  it('fails every read of a failed statement, and only those', async () => {
    const { sut, readMany } = mirror(['1/1', '1/2']);
    readMany.mockRejectedValueOnce(new Error('connection lost'));
    const failed = Promise.allSettled([sut.read('1', '1'), sut.read('1', '2')]);
    expect((await failed).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((await Promise.all([sut.read('1', '1'), sut.read('1', '2')])).map((r) => r?.ticket_id)).toEqual([
      '1',
      '2',
    ]);
  });
});
