import type { ApiKeySpec } from './http/auth';
import type { SandboxClock } from './sandbox.clock';
import type { FaultRule } from './faults/model';
import {
  DEFAULT_SANDBOX_ADMIN_KEY,
  DEFAULT_SANDBOX_API_KEY,
  DEFAULT_SANDBOX_READONLY_API_KEY,
} from '../config/sandbox-defaults';

// The documented default credentials live beside the variables that override them (config/sandbox-defaults.ts).
export { DEFAULT_SANDBOX_ADMIN_KEY, DEFAULT_SANDBOX_API_KEY, DEFAULT_SANDBOX_READONLY_API_KEY };
/** Header that carries the admin key on /__sandbox/* routes. */
export const ADMIN_KEY_HEADER = 'x-sandbox-admin-key';

export interface SandboxOptions {
  host?: string;
  /** 0 picks an ephemeral port. */
  port?: number;
  seed?: string;
  events?: number;
  listings?: number;
  apiKey?: string;
  readOnlyApiKey?: string;
  /** More keys, e.g. a second integration to test idempotency scoping. */
  extraApiKeys?: readonly ApiKeySpec[];
  adminKey?: string;
  landingDelayMs?: number;
  blockhashLifetimeMs?: number;
  blockhashRotationMs?: number;
  landingFailureProbability?: number;
  idempotencyRetentionMs?: number;
  defaultPageLimit?: number;
  maxPageLimit?: number;
  /** Stablecoin balance every wallet starts with, minor units. */
  initialBalanceMinor?: bigint;
  stablecoinDecimals?: number;
  faults?: readonly FaultRule[];
  faultSeed?: string;
  /** Injectable clock; default is wall clock plus an offset that advanceTime() moves. */
  clock?: SandboxClock;
  /** Fastify request logging (headers are redacted, but off by default to keep test output quiet). */
  logger?: boolean;
  /** A request (headers and body) must arrive whole within this long, else 408 — as the service does (30 s). */
  requestTimeoutMs?: number;
}

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'clock' | 'faultSeed'>> & {
  clock?: SandboxClock;
  faultSeed?: string;
};

export function resolveSandboxOptions(options: SandboxOptions): ResolvedSandboxOptions {
  const resolved: ResolvedSandboxOptions = {
    host: '127.0.0.1',
    port: 4010,
    seed: 'sandbox-demo',
    events: 20,
    listings: 2000,
    apiKey: DEFAULT_SANDBOX_API_KEY,
    readOnlyApiKey: DEFAULT_SANDBOX_READONLY_API_KEY,
    extraApiKeys: [],
    adminKey: DEFAULT_SANDBOX_ADMIN_KEY,
    landingDelayMs: 1500,
    blockhashLifetimeMs: 60_000,
    blockhashRotationMs: 400,
    landingFailureProbability: 0,
    idempotencyRetentionMs: 24 * 3_600_000,
    defaultPageLimit: 100,
    maxPageLimit: 1000,
    initialBalanceMinor: 1_000_000_000_000n,
    stablecoinDecimals: 6,
    faults: [],
    logger: false,
    requestTimeoutMs: 30_000,
  };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  if (resolved.defaultPageLimit > resolved.maxPageLimit)
    throw new RangeError('defaultPageLimit exceeds maxPageLimit');
  if (resolved.blockhashRotationMs <= 0 || resolved.blockhashLifetimeMs <= 0) {
    throw new RangeError('blockhash rotation and lifetime must be positive');
  }
  return resolved;
}
