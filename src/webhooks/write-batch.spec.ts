import { describe, expect, it } from 'vitest';
import { WriteBatch } from './write-batch';

describe(WriteBatch.name, () => {
  it('items added in one turn go out together; items added during a write go out right after it', async () => {
    const batches: number[][] = [];
    const gate: { release?: () => void } = {};
    const sut = new WriteBatch<number, string>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((r) => (gate.release = r));
      return items.map((i) => `r${i}`);
    });

    const first = [sut.add(1), sut.add(2)];
    await new Promise((r) => setImmediate(r));
    const later = [sut.add(3), sut.add(4), sut.add(5)];
    gate.release?.();

    expect(await Promise.all([...first, ...later])).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('splits at its bound, and a failed write rejects its own batch only', async () => {
    const batches: number[][] = [];
    const sut = new WriteBatch<number, number>((items) => {
      batches.push(items);
      return batches.length === 1 ? Promise.reject(new Error('db down')) : Promise.resolve(items);
    }, 2);

    const results = await Promise.allSettled([sut.add(1), sut.add(2), sut.add(3)]);

    expect(batches).toEqual([[1, 2], [3]]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(await sut.add(4)).toBe(4);
  });
});
