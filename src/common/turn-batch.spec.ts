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

/** Reads whose statements answer only when the test says so (`statements[i].settle()` answers the i-th). */
function held() {
  const statements: { items: number[]; settle: (fail?: boolean) => void }[] = [];
  const started = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      statements.push({
        items,
        settle: (fail) => (fail ? reject(new Error('statement failed')) : resolve(items.map((i) => i * 10))),
      });
    });
  return {
    statements,
    reads: { one: (item: number) => started([item]).then(([r]) => r ?? 0), many: started },
  };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe(TurnBatch.name, () => {
  it('answers the items asked in one turn with one statement, each its own answer in order', async () => {
    const r = reads();
    const sut = new TurnBatch(r, { max: 64 });
    expect(await Promise.all([3, 1, 2, 3].map((i) => sut.read(i)))).toEqual([30, 10, 20, 30]);
    expect(r.many.mock.calls).toEqual([[[3, 1, 2, 3]]]);
    expect(r.one).not.toHaveBeenCalled();
  });

  it('sends a lone item by the plain read, and reads again on a later turn (nothing kept)', async () => {
    const r = reads();
    const sut = new TurnBatch(r, { max: 64 });
    expect(await sut.read(4)).toBe(40);
    expect(await sut.read(4)).toBe(40);
    expect(r.one).toHaveBeenCalledTimes(2);
    expect(r.many).not.toHaveBeenCalled();
  });

  it('keeps groups apart and splits a group into statements of at most `max` items', async () => {
    const r = reads();
    const sut = new TurnBatch(r, { max: 2, groupOf: (item: number) => (item % 2 === 0 ? 'even' : 'odd') });
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
    const sut = new TurnBatch(r, { max: 2 });
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
      { max: 8 },
    );
    const settled = await Promise.allSettled([1, 2].map((i) => sut.read(i)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });

  describe('with inFlight', () => {
    it('holds what is asked while `inFlight` statements are out, then sends it as one statement', async () => {
      const h = held();
      const sut = new TurnBatch(h.reads, { max: 64, inFlight: 1 });
      const first = sut.read(1);
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([[1]]);
      const later = [2, 3, 4].map((i) => sut.read(i));
      await turn();
      await turn();
      // Still one statement out: 2, 3 and 4 wait for it.
      expect(h.statements).toHaveLength(1);
      h.statements[0]?.settle();
      expect(await first).toBe(10);
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([[1], [2, 3, 4]]);
      h.statements[1]?.settle();
      expect(await Promise.all(later)).toEqual([20, 30, 40]);
    });

    it('sends up to `inFlight` statements of a burst at once and the rest when one answers', async () => {
      const h = held();
      const sut = new TurnBatch(h.reads, { max: 2, inFlight: 2 });
      const answers = Promise.allSettled([1, 2, 3, 4, 5, 6].map((i) => sut.read(i)));
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([
        [1, 2],
        [3, 4],
      ]);
      h.statements[1]?.settle(true);
      await turn();
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([
        [1, 2],
        [3, 4],
        [5, 6],
      ]);
      h.statements[0]?.settle();
      h.statements[2]?.settle();
      const settled = await answers;
      expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'failed'))).toEqual([
        10,
        20,
        'failed',
        'failed',
        50,
        60,
      ]);
    });

    it("takes the groups in turn: one group's burst keeps another group's read behind one statement of it, not all", async () => {
      const h = held();
      const sut = new TurnBatch(h.reads, {
        max: 2,
        inFlight: 1,
        groupOf: (i: number) => (i < 100 ? 'flood' : 'other'),
      });
      const flood = [1, 2, 3, 4, 5, 6].map((i) => sut.read(i));
      const other = sut.read(100);
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([[1, 2]]);
      h.statements[0]?.settle();
      await turn();
      await turn();
      expect(h.statements.map((s) => s.items)).toEqual([[1, 2], [100]]);
      h.statements[1]?.settle();
      expect(await other).toBe(1000);
      for (let k = 2; k <= 3; k++) {
        await turn();
        await turn();
        h.statements[k]?.settle();
      }
      expect(h.statements.map((s) => s.items)).toEqual([[1, 2], [100], [3, 4], [5, 6]]);
      expect(await Promise.all(flood)).toEqual([10, 20, 30, 40, 50, 60]);
    });

    it('frees its slot when the read throws before it returns a promise', async () => {
      let calls = 0;
      const sut = new TurnBatch<number, number>(
        {
          one: (item) => {
            calls++;
            if (item === 1) throw new Error('bad statement');
            return Promise.resolve(item);
          },
          many: (items) => Promise.resolve(items),
        },
        { max: 8, inFlight: 1 },
      );
      await expect(sut.read(1)).rejects.toThrow('bad statement');
      expect(await sut.read(2)).toBe(2);
      expect(calls).toBe(2);
    });

    it('refuses an inFlight below 1', () => {
      expect(() => new TurnBatch(reads(), { max: 8, inFlight: 0 })).toThrow(RangeError);
    });
  });
});
