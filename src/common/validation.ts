import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { AppError, type FieldProblem } from './app-error';

/** At most this many offending fields are listed in a 400 (its message says how many more there are). */
export const MAX_REPORTED_FIELDS = 20;
/** A field name (each dotted segment) is cut to this many characters, with `…`, when it is reported. */
export const MAX_FIELD_NAME_LENGTH = 64;

function shortName(name: string): string {
  return name.length <= MAX_FIELD_NAME_LENGTH ? name : `${name.slice(0, MAX_FIELD_NAME_LENGTH)}…`;
}

/** Flattens class-validator's tree into one entry per offending field, with dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const name = shortName(error.property);
    const field = parent ? `${parent}.${name}` : name;
    if (error.constraints) {
      // "property <name> should not exist" quotes a caller's (unbounded) name: quote the short one.
      const problems = Object.values(error.constraints).map((p) =>
        name === error.property ? p : p.split(error.property).join(name),
      );
      out.push({ field, problems });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

export function validationFailed(problems: FieldProblem[]): AppError {
  const shown = problems.slice(0, MAX_REPORTED_FIELDS);
  const more = problems.length - shown.length;
  const fields = shown.map((p) => p.field).join(', ');
  const suffix = more > 0 ? ` and ${more} more field${more === 1 ? '' : 's'}` : '';
  return new AppError('VALIDATION_FAILED', `Invalid request: ${fields}${suffix}`, shown);
}

/**
 * Keys class-transformer skips without a word (they name something on every object's prototype), so
 * the whitelist never sees them: `{"constructor": 1}` was silently dropped where `{"x": 1}` is a 400.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  ...Object.getOwnPropertyNames(Object.prototype),
]);

/** Every reserved key in a parsed body or query, at any depth, as an unknown-field problem. */
export function reservedKeyProblems(value: unknown): FieldProblem[] {
  const out: FieldProblem[] = [];
  // Iterative (no recursion): body depth is already capped by the JSON parser, query strings are flat.
  const pending: { node: unknown; path: string }[] = [{ node: value, path: '' }];
  while (pending.length > 0 && out.length <= MAX_REPORTED_FIELDS) {
    const { node, path } = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    for (const key of Object.keys(node)) {
      const name = shortName(key);
      const field = path ? `${path}.${name}` : name;
      if (RESERVED_KEYS.has(key)) out.push({ field, problems: [`property ${name} should not exist`] });
      else pending.push({ node: (node as Record<string, unknown>)[key], path: field });
    }
  }
  return out;
}

const PURE_QUERIES = new WeakSet<object>();
/** Validated query DTOs kept per class (see PureQuery); oldest first out past this many. */
export const QUERY_MEMO_MAX_ENTRIES = 2048;

/**
 * Marks a query DTO whose validation and transformation depend on nothing but the query's own values
 * (no clock, no configuration, no other request data): the validation pipe then keeps the (frozen)
 * DTO of each distinct query that passed and hands the same instance to later requests with an equal
 * query, instead of running class-transformer and class-validator again (~3 % of a cached read answer's
 * CPU). Refusals are never kept: an invalid query is validated, and refused, every time. Handlers must
 * treat the DTO as read-only (it is frozen, so a write throws).
 */
export function PureQuery(): ClassDecorator {
  return (target) => {
    PURE_QUERIES.add(target);
  };
}

const BODY_CHECKS = new WeakMap<object, (value: Record<string, unknown>) => boolean>();

/**
 * A hand-written check for a body DTO of flat scalar fields that accepts only bodies class-validator accepts as
 * they are (exactly the DTO's fields, each valid; no transformation beyond making the instance). The validation
 * pipe then builds the DTO from such a body directly, without class-transformer and class-validator (≈ 0.3 ms
 * of CPU per `POST /v1/orders`). A body the check does not accept (a missing, extra or doubtful field) goes the
 * ordinary way, so every refusal is class-validator's own 400. The check may refuse more than class-validator
 * does (it must never accept more): its spec compares the two on generated bodies.
 */
export function FastBodyCheck(check: (value: Record<string, unknown>) => boolean): ClassDecorator {
  return (target) => {
    BODY_CHECKS.set(target, check);
  };
}

/** A plain JSON object (what the body parser makes), nothing with a prototype of its own. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** ValidationPipe that also refuses reserved keys (see RESERVED_KEYS) before transforming. */
class StrictValidationPipe extends ValidationPipe {
  private readonly memo = new WeakMap<object, Map<string, unknown>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (metadata.type === 'body' && metatype) {
      const check = BODY_CHECKS.get(metatype);
      // Accepted as is (see FastBodyCheck): the instance class-transformer would make, all its fields valid.
      if (check && isPlainObject(value) && check(value))
        return Object.assign(new (metatype as new () => object)(), value);
    }
    if (metadata.type === 'body' || metadata.type === 'query') {
      const problems = reservedKeyProblems(value);
      if (problems.length > 0) throw validationFailed(problems);
    }
    if (metadata.type !== 'query' || !metatype || !PURE_QUERIES.has(metatype)) {
      return super.transform(value, metadata) as Promise<unknown>;
    }
    let memo = this.memo.get(metatype);
    if (!memo) this.memo.set(metatype, (memo = new Map()));
    // The parsed query is flat (strings and arrays of strings): its JSON identifies it exactly.
    const key = JSON.stringify(value);
    const known = memo.get(key);
    if (known !== undefined) return known;
    const dto = Object.freeze((await super.transform(value, metadata)) as object);
    if (memo.size >= QUERY_MEMO_MAX_ENTRIES) memo.delete(memo.keys().next().value as string);
    memo.set(key, dto);
    return dto;
  }

  /**
   * A `bigint` parameter (`@Param('id', new ParseU64Pipe('id')) id: bigint`) is parsed by its own pipe,
   * which runs after this global one: there is no DTO to validate, and trying would reject every value.
   */
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }
}

/** Strict DTO validation: unknown fields are rejected, not silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    stopAtFirstError: false,
    // Values are never echoed back: a rejected field might hold a secret.
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationFailed(flattenValidationErrors(errors)),
  });
}
