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
const FIELD_CHECKS: Record<Exclude<keyof FaultRule, 'operation' | 'kind'>, [Check, string]> = {
  rate: [(v) => typeof v === 'number' && v >= 0 && v <= 1, 'must be a number from 0 to 1'],
  times: [(v) => Number.isSafeInteger(v) && (v as number) >= 1, 'must be an integer of at least 1'],
  status: [(v) => v === 500 || v === 502 || v === 503, 'must be 500, 502 or 503'],
  body: [(v) => v === 'json' || v === 'text' || v === 'empty', "must be 'json', 'text' or 'empty'"],
  retryAfter: [
    (v) => v === 'seconds' || v === 'http-date' || v === 'none',
    "must be 'seconds', 'http-date' or 'none'",
  ],
  retryAfterSeconds: [
    (v) => Number.isSafeInteger(v) && (v as number) >= 0,
    'must be an integer of at least 0',
  ],
  latencyMs: [
    (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 600_000,
    'must be an integer from 0 to 600000',
  ],
  fraction: [(v) => typeof v === 'number' && v >= 0 && v <= 1, 'must be a number from 0 to 1'],
  churn: [
    (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 10_000,
    'must be an integer from 0 to 10000',
  ],
};

/** One problem with a fault rule: `path` relative to the rule list (`[0].rate`), values never echoed. */
export interface FaultRuleProblem {
  path: string;
  message: string;
}

/** Validates fault rules; every problem is reported as {path, message}, values are not echoed. */
export function checkFaultRules(
  value: unknown,
): { ok: true; rules: FaultRule[] } | { ok: false; problems: FaultRuleProblem[] } {
  const problems: FaultRuleProblem[] = [];
  if (!Array.isArray(value)) {
    return { ok: false, problems: [{ path: '', message: 'faults must be a JSON array of rules' }] };
  }
  value.forEach((rule: unknown, i) => {
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
      problems.push({ path: `[${i}]`, message: 'must be an object' });
      return;
    }
    const r = rule as Record<string, unknown>;
    if (r.operation !== '*' && !SANDBOX_OPERATIONS.includes(r.operation as SandboxOperation)) {
      problems.push({
        path: `[${i}].operation`,
        message: `must be '*' or one of ${SANDBOX_OPERATIONS.join(', ')}`,
      });
    }
    if (!FAULT_KINDS.includes(r.kind as FaultKind))
      problems.push({ path: `[${i}].kind`, message: `must be one of ${FAULT_KINDS.join(', ')}` });
    for (const key of Object.keys(r)) {
      if (key === 'operation' || key === 'kind') continue;
      const check = FIELD_CHECKS[key as keyof typeof FIELD_CHECKS] as [Check, string] | undefined;
      if (check === undefined) problems.push({ path: `[${i}].${key}`, message: 'is not a fault option' });
      else if (!check[0](r[key])) problems.push({ path: `[${i}].${key}`, message: check[1] });
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, rules: value as FaultRule[] };
}

/** checkFaultRules with each problem as one line (`[0].rate must be a number from 0 to 1`), for SANDBOX_FAULTS. */
export function parseFaultRules(
  value: unknown,
): { ok: true; rules: FaultRule[] } | { ok: false; problems: string[] } {
  const checked = checkFaultRules(value);
  if (checked.ok) return checked;
  return {
    ok: false,
    problems: checked.problems.map((p) => (p.path === '' ? p.message : `${p.path} ${p.message}`)),
  };
}
