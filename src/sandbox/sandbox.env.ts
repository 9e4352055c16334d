import { loadSandboxEnv, type SandboxEnv } from '../config/sandbox.config';
import { collectProblems, ConfigValidationError } from '../config/validate-env';
import { parseFaultRules, type FaultRule } from './faults/model';
import type { SandboxOptions } from './sandbox.options';

/**
 * The rules of SANDBOX_FAULTS, judged by the sandbox (config/ only checks that the value is a JSON array
 * and reports it when it is not, so a syntax error is not reported twice). Throws ConfigValidationError.
 */
export function faultRulesFromEnv(raw: string | undefined): FaultRule[] {
  let value: unknown;
  try {
    value = JSON.parse(raw || '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const parsed = parseFaultRules(value);
  if (!parsed.ok) throw new ConfigValidationError(parsed.problems.map((p) => `SANDBOX_FAULTS${p}`));
  return parsed.rules;
}

/** Validated SANDBOX_* variables plus parsed fault rules → startSandbox options. */
export function sandboxOptionsFromEnv(config: SandboxEnv, faults: readonly FaultRule[]): SandboxOptions {
  return {
    host: config.SANDBOX_HOST,
    port: config.SANDBOX_PORT,
    seed: config.SANDBOX_SEED,
    events: config.SANDBOX_EVENTS,
    listings: config.SANDBOX_LISTINGS,
    apiKey: config.SANDBOX_API_KEY,
    readOnlyApiKey: config.SANDBOX_READONLY_API_KEY,
    adminKey: config.SANDBOX_ADMIN_KEY,
    landingDelayMs: config.SANDBOX_LANDING_DELAY_MS,
    blockhashLifetimeMs: config.SANDBOX_BLOCKHASH_LIFETIME_MS,
    blockhashRotationMs: config.SANDBOX_BLOCKHASH_ROTATION_MS,
    landingFailureProbability: config.SANDBOX_LANDING_FAILURE_PROBABILITY,
    idempotencyRetentionMs: config.SANDBOX_IDEMPOTENCY_RETENTION_MS,
    defaultPageLimit: config.SANDBOX_DEFAULT_PAGE_LIMIT,
    maxPageLimit: config.SANDBOX_MAX_PAGE_LIMIT,
    initialBalanceMinor: BigInt(config.SANDBOX_INITIAL_BALANCE_MINOR),
    stablecoinDecimals: config.SANDBOX_STABLECOIN_DECIMALS,
    faults,
    faultSeed: config.SANDBOX_FAULT_SEED,
    logger: config.SANDBOX_LOG,
  };
}

/**
 * The sandbox's own environment (SANDBOX_*) as startSandbox options; one ConfigValidationError lists
 * every bad variable, fault rules included. Values are never echoed.
 */
export function loadSandboxOptions(env: NodeJS.ProcessEnv): SandboxOptions {
  const problems: string[] = [];
  const config = collectProblems(() => loadSandboxEnv(env), problems);
  const faults = collectProblems(() => faultRulesFromEnv(env.SANDBOX_FAULTS), problems);
  if (config === undefined || faults === undefined || problems.length > 0) {
    throw new ConfigValidationError(problems);
  }
  return sandboxOptionsFromEnv(config, faults);
}
