import { parseI64, parseU64 } from '../chain/u64.codec';
import { isAddress } from '../chain/wallet.keys';

/** One problem with a request body, reported back in the 400 body so a caller can fix the request. */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * Small combinators for hand-written body validation. Hand-written rather than a schema validator because
 * u64 fields need the raw-number handling of raw-json.parser and the problems must name exact paths.
 */
export class FieldReader {
  constructor(readonly problems: FieldProblem[]) {}

  fail(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** Object check plus the sandbox's unknown-field rule: request objects reject fields they do not define. */
  object(value: unknown, path: string, allowed: readonly string[]): Record<string, unknown> | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.fail(path, 'must be an object');
      return undefined;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!allowed.includes(key)) this.fail(`${path}.${key}`, 'unknown field');
    }
    return record;
  }

  u64(record: Record<string, unknown>, key: string, path: string): bigint {
    if (!Object.hasOwn(record, key)) return this.missing(`${path}.${key}`, 0n);
    const parsed = parseU64(record[key]);
    if (!parsed.ok) this.fail(`${path}.${key}`, parsed.reason);
    return parsed.ok ? parsed.value : 0n;
  }

  i64(record: Record<string, unknown>, key: string, path: string): bigint {
    if (!Object.hasOwn(record, key)) return this.missing(`${path}.${key}`, 0n);
    const parsed = parseI64(record[key]);
    if (!parsed.ok) this.fail(`${path}.${key}`, parsed.reason);
    return parsed.ok ? parsed.value : 0n;
  }

  address(record: Record<string, unknown>, key: string, path: string): string {
    if (!Object.hasOwn(record, key)) return this.missing(`${path}.${key}`, '');
    const value = record[key];
    if (!isAddress(value)) {
      this.fail(`${path}.${key}`, 'must be a base58 address of 32 bytes');
      return '';
    }
    return value;
  }

  /** Optional "address or null": absent and null both mean null. */
  nullableAddress(record: Record<string, unknown>, key: string, path: string): string | null {
    if (!Object.hasOwn(record, key) || record[key] === null) return null;
    return this.address(record, key, path);
  }

  addressList(record: Record<string, unknown>, key: string, path: string): string[] {
    if (!Object.hasOwn(record, key)) return this.missing(`${path}.${key}`, []);
    const value = record[key];
    if (!Array.isArray(value)) {
      this.fail(`${path}.${key}`, 'must be an array of addresses');
      return [];
    }
    return value.map((item: unknown, i) => {
      if (isAddress(item)) return item;
      this.fail(`${path}.${key}[${i}]`, 'must be a base58 address of 32 bytes');
      return '';
    });
  }

  private missing<T>(path: string, fallback: T): T {
    this.fail(path, 'is required');
    return fallback;
  }
}
