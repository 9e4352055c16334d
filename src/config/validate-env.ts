import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';

/** Thrown when one or more environment variables are invalid; lists every offender. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/** class-transformer `@Transform` for boolean variables: true/1 and false/0; anything else fails validation. */
export const envBoolean = ({ value }: { value: unknown }): unknown => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return value;
};

function describe(error: ValidationError): string {
  // Several rules of one variable often share a message ("PORT must be an integer from 0 to 65535").
  const expected = [...new Set(Object.values(error.constraints ?? {}))].join('; ');
  return `${error.property}: ${expected}`;
}

/**
 * Validates a raw environment (string values) against a class-validator class.
 * Empty strings count as unset, so `FOO=` falls back to the default.
 * Never echoes the offending value: a secret variable may be the bad one.
 */
export function validateEnvClass<T extends object>(cls: new () => T, raw: NodeJS.ProcessEnv): T {
  // Only the variables the class declares: the rest of the environment (other modules' secrets
  // included) must not ride along on a config object that might one day be logged.
  const declared = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(cls, '', true, false)
      .map((m) => m.propertyName),
  );
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
