import { Column, type ColumnOptions, type ValueTransformer } from 'typeorm';

import { isU64 } from '../common/int64';

export { isU64, U64_MAX } from '../common/int64';

/**
 * Maps Postgres `numeric(20,0)` (returned by pg as a decimal string) to `bigint` and back.
 * Never goes through a JS number, so values above 2^53 keep every digit.
 */
export const u64Transformer: ValueTransformer = {
  to(value: bigint | null | undefined): string | null | undefined {
    if (value === null || value === undefined) return value;
    if (typeof value !== 'bigint' || !isU64(value)) throw new RangeError('u64 column value out of range');
    return value.toString();
  },
  from(value: string | null): bigint | null {
    return value === null ? null : BigInt(value);
  },
};

/**
 * A u64 column: `numeric(20,0)` guarded in SQL by the `u64` domain's CHECK (0..2^64-1), see the
 * CreateU64Domain migration. Migrations declare such columns with the `u64` domain type.
 */
export function U64Column(options: Omit<ColumnOptions, 'type' | 'transformer'> = {}): PropertyDecorator {
  return Column({ type: 'numeric', precision: 20, scale: 0, transformer: u64Transformer, ...options });
}
