import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppError, FieldProblem } from '../../common/app-error';
import { createValidationPipe } from '../../common/validation';
import { CreateOrderDto, isValidCreateOrderBody } from './create-order.dto';

const VALID = {
  buyer_subject: 'user-1',
  buyer_address: 'Buyer1111111111111111111111111111111111111',
  event_id: '100000',
  ticket_id: '1',
  expected_price_minor: '25000000',
};

/** What class-validator alone says of a body (the pipe's options: whitelist, unknown fields refused). */
function classValidatorAccepts(body: Record<string, unknown>): boolean {
  const dto = plainToInstance(CreateOrderDto, body);
  return (
    validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true }).length === 0
  );
}

/** Values near each field's edges: empty, NUL, surrogates, long, non-strings, signs, leading zeros, 2^64. */
const fieldValue = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(...Object.values(VALID)), weight: 6 },
  fc.string({ maxLength: 4 }),
  fc.string({ unit: 'grapheme', minLength: 250, maxLength: 260 }),
  fc.constantFrom('', '\0', 'a\0b', '😀'.repeat(200), ' ', 'x y', '~', '\x7f', 'é'),
  fc.constantFrom(
    '0',
    '00',
    '-1',
    '+1',
    '1.0',
    '18446744073709551615',
    '18446744073709551616',
    '9'.repeat(21),
  ),
  fc.bigInt({ min: 0n, max: 2n ** 64n + 5n }).map(String),
  fc.constantFrom<unknown>(1, null, true, [], {}, undefined),
);
/** Each field mostly valid, else an edge value; now and then a field missing or an extra one. */
const mostlyValid = (valid: string) =>
  fc.oneof({ arbitrary: fc.constant<unknown>(valid), weight: 3 }, { arbitrary: fieldValue, weight: 1 });
const body = fc
  .tuple(
    fc.record({
      buyer_subject: mostlyValid(VALID.buyer_subject),
      buyer_address: mostlyValid(VALID.buyer_address),
      event_id: mostlyValid(VALID.event_id),
      ticket_id: mostlyValid(VALID.ticket_id),
      expected_price_minor: mostlyValid(VALID.expected_price_minor),
    }),
    fc.option(fc.constantFrom(...Object.keys(VALID)), { freq: 5 }),
    fc.option(fieldValue, { freq: 5 }),
  )
  .map(([fields, missing, extra]) => {
    const candidate: Record<string, unknown> = { ...fields };
    if (missing !== null) delete candidate[missing];
    if (extra !== null) candidate.extra = extra;
    return candidate;
  });

describe(isValidCreateOrderBody.name, () => {
  it('accepts a well-formed body', () => {
    expect(isValidCreateOrderBody({ ...VALID })).toBe(true);
  });

  it('never accepts a body class-validator refuses (generated bodies, fixed seed)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (candidate) => {
        if (!isValidCreateOrderBody(candidate)) return;
        accepted++;
        expect(classValidatorAccepts(candidate)).toBe(true);
      }),
      { numRuns: 3000, seed: 12 },
    );
    // The generator reaches the accepting side too (else the property would say nothing).
    expect(accepted).toBeGreaterThan(20);
  });

  it('accepts what class-validator accepts for ordinary valid values', () => {
    const valid = fc.record({
      buyer_subject: fc
        .stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/)
        .filter((s) => s !== '.' && !s.includes('..')),
      buyer_address: fc.stringMatching(/^[\x21-\x7e]{1,128}$/),
      event_id: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
      ticket_id: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
      expected_price_minor: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
    });
    fc.assert(
      fc.property(valid, (candidate) => {
        expect(isValidCreateOrderBody(candidate)).toBe(true);
        expect(classValidatorAccepts(candidate)).toBe(true);
      }),
      { numRuns: 500, seed: 12 },
    );
  });
});

describe('validation pipe with the fast body check', () => {
  const sut = createValidationPipe();
  const run = (value: unknown) => sut.transform(value, { type: 'body', metatype: CreateOrderDto });

  it('builds the same CreateOrderDto class-transformer would', async () => {
    const dto = (await run({ ...VALID })) as CreateOrderDto;
    expect(dto).toBeInstanceOf(CreateOrderDto);
    expect(dto).toEqual(plainToInstance(CreateOrderDto, { ...VALID }));
  });

  it('still answers 400 naming the field for what the check does not accept', async () => {
    for (const [field, value] of [
      ['event_id', '01'],
      ['buyer_subject', 'a\0b'],
      ['buyer_address', 'has space'],
      ['expected_price_minor', 25],
    ] as const) {
      const error = (await run({ ...VALID, [field]: value }).catch((e: unknown) => e)) as AppError;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect((error.details as FieldProblem[]).map((d) => d.field)).toEqual([field]);
    }
    const extra = (await run({ ...VALID, constructor: 1 }).catch((e: unknown) => e)) as AppError;
    expect((extra.details as FieldProblem[]).map((d) => d.field)).toEqual(['constructor']);
  });
});
