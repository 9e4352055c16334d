import { plainToInstance, Transform, Type } from 'class-transformer';
import {
  getMetadataStorage,
  IsBoolean,
  IsInt,
  Max,
  Min,
  validateSync,
  type ValidationError,
} from 'class-validator';

/** Thrown when one or more environment variables are invalid; lists every offender. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/** class-transformer `@Transform` for boolean variables: true/1 and false/0; anything else fails validation. */
const envBoolean = ({ value }: { value: unknown }): unknown => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return value;
};

/** An integer variable within [min, max] (no upper bound when max is omitted); one message: name and range. */
export function EnvInt(min: number, max?: number): PropertyDecorator {
  return (target, key) => {
    const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
    const message = `${String(key)} must be an integer ${range}`;
    Type(() => Number)(target, key);
    IsInt({ message })(target, key);
    Min(min, { message })(target, key);
    if (max !== undefined) Max(max, { message })(target, key);
  };
}

/** A boolean variable: `true`/`1` or `false`/`0`. */
export function EnvBool(): PropertyDecorator {
  return (target, key) => {
    Transform(envBoolean)(target, key);
    IsBoolean({ message: `${String(key)} must be true or false` })(target, key);
  };
}

function describe(error: ValidationError): string {
  // Several rules of one variable often share a message ("PORT must be an integer from 0 to 65535").
  const expected = [...new Set(Object.values(error.constraints ?? {}))].join('; ');
  return `${error.property}: ${expected}`;
}

/** The variables a config class validates (its class-validator metadata), optional ones included. */
export function declaredVariables(cls: new () => object): string[] {
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(cls, '', true, false)
    .map((m) => m.propertyName)
    .filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name));
  return [...new Set(names)];
}

/**
 * Validates a raw environment (string values) against a class-validator class.
 * Empty strings count as unset, so `FOO=` falls back to the default.
 * Never echoes the offending value: a secret variable may be the bad one.
 */
export function validateEnvClass<T extends object>(cls: new () => T, raw: NodeJS.ProcessEnv): T {
  // Only the variables the class declares: the rest of the environment (other modules' secrets
  // included) must not ride along on a config object that might one day be logged.
  const declared = new Set(declaredVariables(cls));
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (declared.has(key) && value !== undefined && value !== '') cleaned[key] = value;
  }
  const instance = plainToInstance(cls, cleaned, {
    enableImplicitConversion: false,
    exposeDefaultValues: true,
  });
  const errors = validateSync(instance, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigValidationError(errors.map(describe));
  return instance;
}

/**
 * Runs one loader of a multi-class validation: its value, or undefined after adding its problems to
 * `problems` (so one start reports every class's problems). Any other error propagates.
 */
export function collectProblems<T>(load: () => T, problems: string[]): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/** The problems a loader reports ([] when it succeeds). */
export function configProblems(load: () => unknown): readonly string[] {
  const problems: string[] = [];
  collectProblems(load, problems);
  return problems;
}
