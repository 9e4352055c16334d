import { Injectable, type PipeTransform } from '@nestjs/common';
import { ValidateBy, type ValidationOptions } from 'class-validator';
import { I64_MAX, I64_MIN, isI64, isU64, U64_MAX } from './int64';
import { validationFailed } from './validation';

// Canonical decimal: no sign on u64, no leading zeros, no "-0"; length bounded before BigInt().
const U64_TEXT = /^(0|[1-9]\d{0,19})$/;
const I64_TEXT = /^(0|-?[1-9]\d{0,18})$/;

/** The u64 a canonical decimal string denotes, or undefined (wrong shape or out of range). */
export function parseU64String(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !U64_TEXT.test(value)) return undefined;
  const parsed = BigInt(value);
  return isU64(parsed) ? parsed : undefined;
}

/** The i64 a canonical decimal string denotes, or undefined (wrong shape or out of range). */
export function parseI64String(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !I64_TEXT.test(value)) return undefined;
  const parsed = BigInt(value);
  return isI64(parsed) ? parsed : undefined;
}

const U64_RANGE = `0..${U64_MAX}`;
const I64_RANGE = `${I64_MIN}..${I64_MAX}`;

/** A u64 on the wire: a decimal string (no sign, no leading zeros) within 0..2^64-1. */
export function IsU64String(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isU64String',
      validator: {
        validate: (value: unknown) => parseU64String(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be a decimal string of an unsigned 64-bit integer (${U64_RANGE})`,
      },
    },
    options,
  );
}

/** An i64 on the wire: a decimal string (optional `-`, no leading zeros) within -2^63..2^63-1. */
export function IsI64String(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isI64String',
      validator: {
        validate: (value: unknown) => parseI64String(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be a decimal string of a signed 64-bit integer (${I64_RANGE})`,
      },
    },
    options,
  );
}

/**
 * Path or query parameter → bigint u64: `@Param('event_id', new ParseU64Pipe('event_id'))`.
 * Anything else is VALIDATION_FAILED naming the parameter (never echoing the value).
 */
@Injectable()
export class ParseU64Pipe implements PipeTransform<unknown, bigint> {
  constructor(private readonly name: string) {}

  transform(value: unknown): bigint {
    const parsed = parseU64String(value);
    if (parsed === undefined) {
      throw validationFailed([
        {
          field: this.name,
          problems: [`${this.name} must be a decimal string of an unsigned 64-bit integer (${U64_RANGE})`],
        },
      ]);
    }
    return parsed;
  }
}
