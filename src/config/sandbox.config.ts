import { Type } from 'class-transformer';
import { IsNotEmpty, IsNumber, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { isU64 } from '../common/int64';
import {
  DEFAULT_SANDBOX_ADMIN_KEY,
  DEFAULT_SANDBOX_API_KEY,
  DEFAULT_SANDBOX_READONLY_API_KEY,
} from './sandbox-defaults';
import { collectProblems, ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

/** Sandbox keys must have the sandbox form, so a production-looking key can never be configured by mistake. */
const SANDBOX_KEY = /^trk_test_[A-Za-z0-9_]{16,}$/;

/** Every SANDBOX_* variable with its default (docs/sandbox.md has the table). */
export class SandboxEnv {
  @EnvInt(0, 65535) SANDBOX_PORT: number = 4010;
  @IsOptional() @IsString() @IsNotEmpty() SANDBOX_HOST: string = '127.0.0.1';
  @IsOptional() @IsString() @IsNotEmpty() SANDBOX_SEED: string = 'sandbox-demo';
  @EnvInt(0, 100_000) SANDBOX_EVENTS: number = 20;
  @EnvInt(0, 5_000_000) SANDBOX_LISTINGS: number = 2000;
  @IsOptional() @Matches(SANDBOX_KEY) SANDBOX_API_KEY: string = DEFAULT_SANDBOX_API_KEY;
  @IsOptional() @Matches(SANDBOX_KEY) SANDBOX_READONLY_API_KEY: string = DEFAULT_SANDBOX_READONLY_API_KEY;
  @IsOptional() @IsString() @MinLength(8) SANDBOX_ADMIN_KEY: string = DEFAULT_SANDBOX_ADMIN_KEY;
  @Retried({
    unit: 'ms',
    bounds: 'how long a sandbox submission stays `processing` before it lands',
    where: 'sandbox/',
  })
  @EnvInt(0, 3_600_000)
  SANDBOX_LANDING_DELAY_MS: number = 1500;
  @Retried({
    unit: 'ms',
    bounds: 'after this the sandbox answers `expired` for a transaction that did not land',
    where: 'sandbox/',
  })
  @EnvInt(1000)
  SANDBOX_BLOCKHASH_LIFETIME_MS: number = 60_000;
  @EnvInt(1) SANDBOX_BLOCKHASH_ROTATION_MS: number = 400;
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0) @Max(1) SANDBOX_LANDING_FAILURE_PROBABILITY: number =
    0;
  @Retried({ unit: 'ms', bounds: 'how long the sandbox remembers an idempotency key', where: 'sandbox/' })
  @EnvInt(0)
  SANDBOX_IDEMPOTENCY_RETENTION_MS: number = 86_400_000;
  @EnvInt(1) SANDBOX_DEFAULT_PAGE_LIMIT: number = 100;
  @EnvInt(1, 100_000) SANDBOX_MAX_PAGE_LIMIT: number = 1000;
  @IsOptional() @Matches(/^[0-9]{1,20}$/) SANDBOX_INITIAL_BALANCE_MINOR: string = '1000000000000';
  @EnvInt(0, 18) SANDBOX_STABLECOIN_DECIMALS: number = 6;
  /** JSON array of fault rules, e.g. [{"operation":"listings","kind":"error","rate":0.1}]. */
  @IsOptional() @IsString() SANDBOX_FAULTS: string = '[]';
  @IsOptional() @IsString() @IsNotEmpty() SANDBOX_FAULT_SEED?: string;
  @EnvBool() SANDBOX_LOG = false;
}

/**
 * Validates the SANDBOX_* variables that need no sandbox knowledge (types, ranges, the rules between them,
 * SANDBOX_FAULTS being JSON) and lists every problem at once. The sandbox judges the fault rules themselves
 * and turns this into its options (src/sandbox/sandbox.env.ts), so config/ imports nothing of sandbox/.
 */
export function loadSandboxEnv(env: NodeJS.ProcessEnv): SandboxEnv {
  const problems: string[] = [];
  // On invalid variables, go on with the defaults so the cross-variable checks below still run.
  const config = collectProblems(() => validateEnvClass(SandboxEnv, env), problems) ?? new SandboxEnv();
  if (!Array.isArray(parseJsonOrUndefined(env.SANDBOX_FAULTS || '[]'))) {
    problems.push('SANDBOX_FAULTS: must be a JSON array of fault rules');
  }
  if (config.SANDBOX_API_KEY === config.SANDBOX_READONLY_API_KEY) {
    problems.push('SANDBOX_READONLY_API_KEY: must differ from SANDBOX_API_KEY');
  }
  if (config.SANDBOX_DEFAULT_PAGE_LIMIT > config.SANDBOX_MAX_PAGE_LIMIT) {
    problems.push('SANDBOX_DEFAULT_PAGE_LIMIT: must not exceed SANDBOX_MAX_PAGE_LIMIT');
  }
  if (!isU64(BigInt(config.SANDBOX_INITIAL_BALANCE_MINOR))) {
    problems.push('SANDBOX_INITIAL_BALANCE_MINOR: must be a u64');
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return config;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
