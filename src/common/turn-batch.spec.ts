import { describe, expect, it, vi } from 'vitest';
import { TurnBatch } from './turn-batch';

/** Reads that answer `item * 10`, with spies on both paths; `many` fails when a batch holds `failOn`. */
function reads(failOn?: number) {
  const one = vi.fn<(item: number) => Promise<number>>(async (item: number) => item * 10);
  const many = vi.fn<(items: number[]) => Promise<number[]>>(async (items: number[]) => {
    if (failOn !== undefined && items.includes(failOn)) throw new Error(`batch with ${failOn}`);
    return items.map((item) => item * 10);
  });
  return { one, many };
}

describe(TurnBatch.name, () => {
  it('answers the items asked in one turn with one statement, each its own answer in order', async () => {
    const r = reads();
    const sut = new TurnBatch(r, 64);
    expect(await Promise.all([3, 1, 2, 3].map((i) => sut.read(i)))).toEqual([30, 10, 20, 30]);
    expect(r.many.mock.calls).toEqual([[[3, 1, 2, 3]]]);
    expect(r.one).not.toHaveBeenCalled();
  });

  it('sends a lone item by the plain read, and reads again on a later turn (nothing kept)', async () => {
    const r = reads();
    const sut = new TurnBatch(r, 64);
    expect(await sut.read(4)).toBe(40);
    expect(await sut.read(4)).toBe(40);
    expect(r.one).toHaveBeenCalledTimes(2);
    expect(r.many).not.toHaveBeenCalled();
  });

  it('keeps groups apart and splits a group into statements of at most `max` items', async () => {
    const r = reads();
    const sut = new TurnBatch(r, 2, (item: number) => (item % 2 === 0 ? 'even' : 'odd'));
    const answers = await Promise.all([1, 2, 3, 4, 5, 6, 8].map((i) => sut.read(i)));
    expect(answers).toEqual([10, 20, 30, 40, 50, 60, 80]);
    expect(r.many.mock.calls.map(([items]) => items)).toEqual([
      [1, 3],
      [2, 4],
      [6, 8],
    ]);
    expect(r.one.mock.calls.map(([item]) => item)).toEqual([5]);
  });

  it("fails every item of a failed statement, and only that statement's items", async () => {
    const r = reads(3);
    const sut = new TurnBatch(r, 2);
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => sut.read(i)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
  });

  it('fails the batch when the read throws before it returns a promise', async () => {
    const sut = new TurnBatch<number, number>(
      {
        one: async (item) => item,
        many: () => {
          throw new Error('bad statement');
        },
      },
      8,
    );
    const settled = await Promise.allSettled([1, 2].map((i) => sut.read(i)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });
});
