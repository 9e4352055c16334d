import { describe, expect, it } from 'vitest';
import type { EventBatch } from './event.repository';
import { PageBatcher, type BatchedPage, type PageBatch } from './page-batcher';

/** A batch holder that refuses a key it already holds (as ListingBatch does). */
class KeyedHolder {
  keys: string[] = [];
  get rows(): number {
    return this.keys.length;
  }
  reset(): void {
    this.keys = [];
  }
  add(rows: readonly string[]): boolean {
    if (rows.some((k) => this.keys.includes(k))) return false;
    this.keys.push(...rows);
    return true;
  }
}

const page = (keys: string[], skipped = 0): BatchedPage => ({
  rows: keys,
  items: keys.length + skipped,
  skippedCount: skipped,
  skipped: skipped > 0 ? { 'ticket_id missing or null': skipped } : {},
  observedAt: new Date(0),
});

function setup(batchRows: number, write?: (batch: PageBatch) => Promise<number>) {
  const writes: string[][] = [];
  const events: string[] = [];
  const sut = new PageBatcher({
    holders: [new KeyedHolder(), new KeyedHolder()] as unknown as [EventBatch, EventBatch],
    batchRows,
    maxDelayMs: 60_000,
    write:
      write ??
      (async (batch) => {
        const keys = [...(batch.data as unknown as KeyedHolder).keys];
        writes.push(keys);
        return keys.length;
      }),
    written: (batch) => events.push(`written ${batch.pageCount}`),
  });
  return { sut, writes, events };
}

describe(PageBatcher.name, () => {
  it('writes a batch once it holds batchRows rows, and the rest on drain, counting every page', async () => {
    const { sut, writes } = setup(3);
    await sut.add(page(['a', 'b']));
    expect(writes).toEqual([]);
    await sut.add(page(['c', 'd'], 1));
    await sut.add(page(['e']));
    await sut.drain();
    expect(writes).toEqual([['a', 'b', 'c', 'd'], ['e']]);
    expect(sut.totals).toEqual({ pages: 3, items: 6, upserted: 5, skipped: 1 });
    expect(sut.skippedByReason).toEqual({ 'ticket_id missing or null': 1 });
  });

  it('a page repeating a key of the batch writes the batch first (one upsert never touches a row twice)', async () => {
    const { sut, writes } = setup(100);
    await sut.add(page(['a', 'b']));
    await sut.add(page(['b', 'c']));
    await sut.drain();
    expect(writes).toEqual([
      ['a', 'b'],
      ['b', 'c'],
    ]);
  });

  it('keeps at most one batch in flight: the next flush waits for it', async () => {
    let release: (() => void) | undefined;
    const started: number[] = [];
    const { sut } = setup(1, async (batch) => {
      started.push(batch.pageCount);
      if (started.length === 1) await new Promise<void>((r) => (release = r));
      return 1;
    });
    await sut.add(page(['a']));
    const second = sut.add(page(['b']));
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([1]);
    release?.();
    await second;
    await sut.drain();
    expect(started).toEqual([1, 1]);
  });

  it('a failed write fails the pass at the next flush; settle() waits for it without throwing', async () => {
    const { sut } = setup(1, () => Promise.reject(new Error('write failed')));
    await sut.add(page(['a']));
    await sut.settle();
    await expect(sut.drain()).rejects.toThrow('write failed');
    expect(sut.totals.pages).toBe(0);
  });
});
