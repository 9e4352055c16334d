import { createHash, timingSafeEqual } from 'node:crypto';

/** Permission names are the sandbox's own (the contract does not show them). */
export type Permission = 'read' | 'sign' | 'submit' | 'purchase';

export interface ApiKeySpec {
  /** Stable name of the key; it scopes idempotency keys and purchase-status lookups. */
  name: string;
  key: string;
  permissions: readonly Permission[];
}

/** Sandbox keys look like `trk_test_…`; production keys like `trk_live_…` are recognised and refused. */
export const SANDBOX_KEY_PREFIX = 'trk_test_';
export const PRODUCTION_KEY_PREFIX = 'trk_live_';

export type AuthOutcome =
  | { ok: true; name: string; permissions: readonly Permission[] }
  | { ok: false; reason: 'missing' | 'invalid' | 'other_environment' };

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * API-key check. Keys are compared as sha256 digests with timingSafeEqual so response timing does not leak
 * how much of a key matched; a prefix of a valid key is simply a different, unknown key (401).
 */
export class ApiKeyRegistry {
  private readonly keys: { spec: ApiKeySpec; digest: Buffer }[];

  constructor(specs: readonly ApiKeySpec[]) {
    this.keys = specs.map((spec) => ({ spec, digest: digest(spec.key) }));
  }

  authenticate(header: string | string[] | undefined): AuthOutcome {
    if (header === undefined || header === '') return { ok: false, reason: 'missing' };
    if (Array.isArray(header)) return { ok: false, reason: 'invalid' };
    const candidate = digest(header);
    let match: ApiKeySpec | undefined;
    for (const entry of this.keys) {
      if (timingSafeEqual(entry.digest, candidate)) match = entry.spec;
    }
    if (match !== undefined) return { ok: true, name: match.name, permissions: match.permissions };
    return { ok: false, reason: header.startsWith(PRODUCTION_KEY_PREFIX) ? 'other_environment' : 'invalid' };
  }
}
