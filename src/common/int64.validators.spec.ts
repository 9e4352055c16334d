import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error';
import { I64_MAX, I64_MIN, U64_MAX } from './int64';
import { IsI64String, IsU64String, ParseU64Pipe } from './int64.validators';

class Body {
  @IsU64String()
  amount: unknown;

  @IsI64String()
  at: unknown;
}

function problems(amount: unknown, at: unknown = '0'): string[] {
  const errors = validateSync(plainToInstance(Body, { amount, at }));
  return errors.flatMap((e) => Object.values(e.constraints ?? {}));
}

describe(IsU64String.name, () => {
  it.each(['0', '1', '42', U64_MAX.toString()])('accepts %s', (value) => {
    expect(problems(value)).toEqual([]);
  });

  it.each([
    ['2^64', (U64_MAX + 1n).toString()],
    ['negative', '-1'],
    ['leading zero', '01'],
    ['plus sign', '+1'],
    ['decimal point', '1.0'],
    ['exponent', '1e3'],
    ['spaces', ' 1'],
    ['hex', '0x10'],
    ['empty', ''],
    ['a number, not a string', 1],
    ['very long', '9'.repeat(400)],
  ])('rejects %s, naming the property', (_name, value) => {
    expect(problems(value)).toEqual([
      expect.stringMatching(/^amount must be a decimal string of an unsigned/),
    ]);
  });

  it('accepts exactly the canonical text of every u64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (n) => {
        expect(problems(n.toString())).toEqual([]);
      }),
    );
  });
});

describe(IsI64String.name, () => {
  it.each(['0', '-1', I64_MIN.toString(), I64_MAX.toString()])('accepts %s', (value) => {
    expect(problems('0', value)).toEqual([]);
  });

  it.each([(I64_MAX + 1n).toString(), (I64_MIN - 1n).toString(), '-0', '007', '1.5', 5])(
    'rejects %s, naming the property',
    (value) => {
      expect(problems('0', value)).toEqual([
        expect.stringMatching(/^at must be a decimal string of a signed/),
      ]);
    },
  );
});

describe(ParseU64Pipe.name, () => {
  const sut = new ParseU64Pipe('event_id');

  it('turns a u64 parameter into a bigint', () => {
    expect(sut.transform('0')).toBe(0n);
    expect(sut.transform(U64_MAX.toString())).toBe(U64_MAX);
  });

  it.each(['-1', (U64_MAX + 1n).toString(), 'abc', '', undefined, '1 '])(
    'answers %s with VALIDATION_FAILED naming the parameter',
    (value) => {
      let thrown: unknown;
      try {
        sut.transform(value);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect(thrown).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'event_id', problems: [expect.stringContaining('event_id')] }],
      });
    },
  );
});
