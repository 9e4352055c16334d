type Column = Uint8Array | Int32Array | Uint32Array | Float64Array | BigInt64Array | BigUint64Array;

/** Copies a typed array into a larger one of the same kind; the amortised-doubling step of columnar stores. */
export function growColumn<T extends Column>(column: T, capacity: number): T {
  const Ctor = column.constructor as new (length: number) => T;
  const next = new Ctor(capacity);
  (next as unknown as { set(source: T): void }).set(column);
  return next;
}

/** Ascending list of 32-bit integers with append and binary search, used for per-event listing order. */
export class SortedUint32List {
  private values = new Uint32Array(4);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) this.values = growColumn(this.values, this.values.length * 2);
    this.values[this.length++] = value;
  }

  at(index: number): number {
    return this.values[index];
  }

  /** Index of the first element greater than `value` (values are appended in ascending order). */
  firstAfter(value: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.values[mid] <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * A 64-bit value as a number when it is exact (|v| <= 2^53-1), else `fallback`. Number columns beside the
 * bigint ones let page serialisation format most values without reading (and allocating) a bigint.
 */
export function safeNumberOr(value: bigint, fallback: number): number {
  return value <= 9_007_199_254_740_991n && value >= -9_007_199_254_740_991n ? Number(value) : fallback;
}
