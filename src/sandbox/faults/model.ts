export const SANDBOX_OPERATIONS = [
  'events',
  'listings',
  'protocolConfig',
  'signUser',
  'signIntegrator',
  'submit',
  'purchaseStatus',
] as const;
export type SandboxOperation = (typeof SANDBOX_OPERATIONS)[number];

export const FAULT_KINDS = [
  'error',
  'rate_limit',
  'latency',
  'hang',
  'reset',
  'malformed_json',
  'response_lost',
  'empty_page',
  'null_ids',
  'extra_fields',
  'u64_as_number',
  'inventory_churn',
  'status_null',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault-injection rule; docs/sandbox.md lists what each kind does and which operations it affects. */
export interface FaultRule {
  operation: SandboxOperation | '*';
  kind: FaultKind;
  /** Probability per matching call, 0..1 (default 1), drawn from the seeded fault PRNG. */
  rate?: number;
  /** Fire on the next N matching calls only, then remove the rule ("fail the next N calls"). */
  times?: number;
  /** error: HTTP status (default 503). */
  status?: 500 | 502 | 503;
  /** error / rate_limit: body shape (default json for error, text for rate_limit). */
  body?: 'json' | 'text' | 'empty';
  /** rate_limit: Retry-After form (default seconds) and value (default 1). */
  retryAfter?: 'seconds' | 'http-date' | 'none';
  retryAfterSeconds?: number;
  /** latency: added delay in real milliseconds (default 250). */
  latencyMs?: number;
  /** null_ids: share of page items whose identifier becomes null (default 0.2). */
  fraction?: number;
  /** inventory_churn: listings removed and as many inserted after the page is built (default 5). */
  churn?: number;
}

type Check = (value: unknown) => boolean;
const FIELD_CHECKS: Record<Exclude<keyof FaultRule, 'operation' | 'kind'>, Check> = {
  rate: (v) => typeof v === 'number' && v >= 0 && v <= 1,
  times: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
  status: (v) => v === 500 || v === 502 || v === 503,
  body: (v) => v === 'json' || v === 'text' || v === 'empty',
  retryAfter: (v) => v === 'seconds' || v === 'http-date' || v === 'none',
  retryAfterSeconds: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  latencyMs: (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 600_000,
  fraction: (v) => typeof v === 'number' && v >= 0 && v <= 1,
  churn: (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 10_000,
};

/** Validates rules from SANDBOX_FAULTS or the admin API; every problem is reported, values are not echoed. */
export function parseFaultRules(
  value: unknown,
): { ok: true; rules: FaultRule[] } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  if (!Array.isArray(value)) return { ok: false, problems: ['faults must be a JSON array of rules'] };
  value.forEach((rule: unknown, i) => {
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
      problems.push(`[${i}] must be an object`);
      return;
    }
    const r = rule as Record<string, unknown>;
    if (r.operation !== '*' && !SANDBOX_OPERATIONS.includes(r.operation as SandboxOperation)) {
      problems.push(`[${i}].operation must be '*' or one of ${SANDBOX_OPERATIONS.join(', ')}`);
    }
    if (!FAULT_KINDS.includes(r.kind as FaultKind))
      problems.push(`[${i}].kind must be one of ${FAULT_KINDS.join(', ')}`);
    for (const key of Object.keys(r)) {
      if (key === 'operation' || key === 'kind') continue;
      const check = FIELD_CHECKS[key as keyof typeof FIELD_CHECKS] as Check | undefined;
      if (check === undefined) problems.push(`[${i}].${key} is not a fault option`);
      else if (!check(r[key])) problems.push(`[${i}].${key} is out of range`);
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, rules: value as FaultRule[] };
}
