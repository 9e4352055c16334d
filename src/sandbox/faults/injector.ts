import type { FaultRule, SandboxOperation } from './model';
import { SeededRandom } from '../chain/prng';

/** What the faults decided for one call: at most one terminal outcome plus any number of modifiers. */
export interface FaultPlan {
  latencyMs: number;
  terminal?: FaultRule;
  responseLost: boolean;
  emptyPage: boolean;
  nullIdFraction: number;
  extraFields: boolean;
  u64AsNumber: boolean;
  churn: number;
  statusNull: boolean;
}

const TERMINAL = new Set(['error', 'rate_limit', 'hang', 'reset', 'malformed_json']);

export function noFaults(): FaultPlan {
  return {
    latencyMs: 0,
    responseLost: false,
    emptyPage: false,
    nullIdFraction: 0,
    extraFields: false,
    u64AsNumber: false,
    churn: 0,
    statusNull: false,
  };
}

/**
 * Active fault rules and the seeded PRNG that decides them, so a fault run reproduces from its seed.
 * Rules are evaluated in order; the first terminal rule that fires wins and later terminal rules are not
 * consumed, which keeps "fail the next N calls" counts exact.
 */
export class FaultInjector {
  private rules: { rule: FaultRule; remaining: number }[] = [];
  private rng: SeededRandom;

  constructor(private readonly seed: string) {
    this.rng = new SeededRandom(seed, 'faults');
  }

  /** Replaces all rules and restarts the fault PRNG (from `seed` when given). */
  set(rules: readonly FaultRule[], seed?: string): void {
    this.rules = rules.map((rule) => ({ rule: { ...rule }, remaining: rule.times ?? Infinity }));
    this.rng = new SeededRandom(seed ?? this.seed, 'faults');
  }

  add(rule: FaultRule): void {
    this.rules.push({ rule: { ...rule }, remaining: rule.times ?? Infinity });
  }

  clear(): void {
    this.rules = [];
  }

  list(): FaultRule[] {
    return this.rules.map(({ rule, remaining }) =>
      Number.isFinite(remaining) ? { ...rule, times: remaining } : { ...rule },
    );
  }

  plan(operation: SandboxOperation): FaultPlan {
    const plan = noFaults();
    for (const entry of this.rules) {
      const { rule } = entry;
      if (rule.operation !== '*' && rule.operation !== operation) continue;
      if (TERMINAL.has(rule.kind) && plan.terminal !== undefined) continue;
      if (!this.rng.chance(rule.rate ?? 1)) continue;
      entry.remaining--;
      switch (rule.kind) {
        case 'error':
        case 'rate_limit':
        case 'hang':
        case 'reset':
        case 'malformed_json':
          plan.terminal = rule;
          break;
        case 'latency':
          plan.latencyMs += rule.latencyMs ?? 250;
          break;
        case 'response_lost':
          plan.responseLost = true;
          break;
        case 'empty_page':
          plan.emptyPage = true;
          break;
        case 'null_ids':
          plan.nullIdFraction = rule.fraction ?? 0.2;
          break;
        case 'extra_fields':
          plan.extraFields = true;
          break;
        case 'u64_as_number':
          plan.u64AsNumber = true;
          break;
        case 'inventory_churn':
          plan.churn += rule.churn ?? 5;
          break;
        case 'status_null':
          plan.statusNull = true;
          break;
      }
    }
    this.rules = this.rules.filter((entry) => entry.remaining > 0);
    return plan;
  }

  /** The fault PRNG, shared with modifiers (null ids, churn) so they reproduce too. */
  random(): SeededRandom {
    return this.rng;
  }
}
