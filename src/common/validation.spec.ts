import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min, ValidateNested } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error';
import { createValidationPipe } from './validation';

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
});
