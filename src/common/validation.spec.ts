import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error';
import {
  createValidationPipe,
  PureQuery,
  QUERY_MEMO_MAX_ENTRIES,
  MAX_FIELD_NAME_LENGTH,
  MAX_REPORTED_FIELDS,
  reservedKeyProblems,
  validationFailed,
} from './validation';

class Inner {
  @IsString()
  name: string;
}
class Query {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit: number;

  @ValidateNested()
  @Type(() => Inner)
  inner: Inner;
}

describe(createValidationPipe.name, () => {
  const sut = createValidationPipe();
  const run = (value: unknown) => sut.transform(value, { type: 'body', metatype: Query });

  it('transforms valid input', async () => {
    await expect(run({ limit: '10', inner: { name: 'a' } })).resolves.toMatchObject({ limit: 10 });
  });

  it('names every offending field, nested ones with dotted paths, without echoing values', async () => {
    const error = (await run({ limit: 'x-secret', inner: { name: 5 } }).catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('VALIDATION_FAILED');
    const fields = (error.details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(['limit', 'inner.name']);
    expect(JSON.stringify(error.details)).not.toContain('x-secret');
  });

  it('rejects unknown fields instead of dropping them', async () => {
    const error = (await run({ limit: 1, inner: { name: 'a' }, admin: true }).catch(
      (e: unknown) => e,
    )) as AppError;
    expect((error.details as { field: string }[]).map((d) => d.field)).toContain('admin');
  });

  it.each(['constructor', 'prototype', '__proto__', 'toString', 'hasOwnProperty'])(
    'rejects a field named %s (class-transformer would drop it silently)',
    async (name) => {
      const body = JSON.parse(`{"limit":1,"inner":{"name":"a","${name}":1}}`) as unknown;
      const error = (await run(body).catch((e: unknown) => e)) as AppError;
      expect(error).toBeInstanceOf(AppError);
      expect(error.details).toEqual([
        { field: `inner.${name}`, problems: [`property ${name} should not exist`] },
      ]);
    },
  );

  it('cuts long unknown field names and lists at most MAX_REPORTED_FIELDS of them', async () => {
    const long = 'y'.repeat(1000);
    const body = {
      limit: 1,
      inner: { name: 'a' },
      [long]: 1,
      ...Object.fromEntries('abcdefghijklmnopqrstuvwxyz'.split('').map((c) => [c, 1])),
    };
    const error = (await run(body).catch((e: unknown) => e)) as AppError;
    const details = error.details as { field: string; problems: string[] }[];
    expect(details).toHaveLength(MAX_REPORTED_FIELDS);
    expect(details[0]).toEqual({
      field: `${'y'.repeat(MAX_FIELD_NAME_LENGTH)}…`,
      problems: [`property ${'y'.repeat(MAX_FIELD_NAME_LENGTH)}… should not exist`],
    });
    expect(error.message).toMatch(/ and 7 more fields$/);
  });
});

@PureQuery()
class PureListQuery {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;

  @IsOptional()
  @IsString()
  tag?: string;
}

describe(PureQuery.name, () => {
  const sut = createValidationPipe();
  const query = (value: unknown, metatype: new () => object = PureListQuery) =>
    sut.transform(value, { type: 'query', metatype });

  it('hands an equal query the same frozen DTO instead of validating it again', async () => {
    const first = await query({ limit: '10' });
    expect(first).toBeInstanceOf(PureListQuery);
    expect(first).toEqual({ limit: 10 });
    expect(Object.isFrozen(first)).toBe(true);
    await expect(query({ limit: '10' })).resolves.toBe(first);
    await expect(query({ limit: '11' })).resolves.not.toBe(first);
    await expect(query({})).resolves.toEqual({ limit: 20 });
  });

  it('refuses an invalid query every time, naming the field (refusals are not kept)', async () => {
    for (let i = 0; i < 2; i++) {
      await expect(query({ limit: '0' })).rejects.toMatchObject({
        details: [{ field: 'limit' }],
      });
      await expect(query({ limit: '10', extra: 'x' })).rejects.toMatchObject({
        details: [{ field: 'extra' }],
      });
    }
  });

  it('keeps at most QUERY_MEMO_MAX_ENTRIES queries per class, oldest out first', async () => {
    const first = await query({ tag: 'first' });
    for (let i = 1; i < QUERY_MEMO_MAX_ENTRIES; i++) await query({ tag: String(i) });
    await expect(query({ tag: 'first' })).resolves.toBe(first);
    await query({ tag: 'one too many' });
    const again = await query({ tag: 'first' });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('leaves undecorated query classes and bodies alone (validated each time, not frozen)', async () => {
    const a = await sut.transform({ limit: '10' }, { type: 'body', metatype: PureListQuery });
    const b = await sut.transform({ limit: '10' }, { type: 'body', metatype: PureListQuery });
    expect(a).not.toBe(b);
    expect(Object.isFrozen(a)).toBe(false);
    const c = await sut.transform({ limit: '10', inner: { name: 'x' } }, { type: 'query', metatype: Query });
    expect(Object.isFrozen(c)).toBe(false);
  });
});

describe(validationFailed.name, () => {
  it('keeps short lists whole', () => {
    const problems = [{ field: 'a', problems: ['p'] }];
    expect(validationFailed(problems)).toMatchObject({ message: 'Invalid request: a', details: problems });
  });

  it('says "1 more field" in the singular', () => {
    const problems = Array.from({ length: MAX_REPORTED_FIELDS + 1 }, (_, i) => ({
      field: `f${i}`,
      problems: [],
    }));
    expect(validationFailed(problems).message).toMatch(/ and 1 more field$/);
  });
});

describe(reservedKeyProblems.name, () => {
  it('finds reserved keys at any depth, in arrays too, and nothing in ordinary values', () => {
    const value = JSON.parse(
      '{"a":[{"constructor":{}}],"b":{"c":{"prototype":1}},"d":"constructor"}',
    ) as unknown;
    expect(
      reservedKeyProblems(value)
        .map((p) => p.field)
        .sort(),
    ).toEqual(['a.0.constructor', 'b.c.prototype']);
    expect(reservedKeyProblems({ a: [1, 'x', null], b: { c: 'toString' } })).toEqual([]);
    expect(reservedKeyProblems('constructor')).toEqual([]);
  });
});
