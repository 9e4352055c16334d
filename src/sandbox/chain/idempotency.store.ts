export type SigningOperation = 'signUser' | 'signIntegrator';

export interface IdempotencyEntry {
  readonly operation: SigningOperation;
  /** Canonical rendering of operation + subject + validated batch: what "same payload" means. */
  readonly fingerprint: string;
  readonly transactionId: string;
  readonly createdAtMs: number;
}

export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; entry: IdempotencyEntry }
  | { kind: 'conflict'; entry: IdempotencyEntry };

/**
 * Signing idempotency. Scope: one API key (by its configured name) + the exact key string, so two
 * integrations cannot collide or read each other's purchases. Only successful signings are remembered; a
 * rejected request can be fixed and retried under the same key. Entries are forgotten `retentionMs` after
 * creation (sandbox clock), after which the key is new again.
 */
export class IdempotencyStore {
  private readonly entries = new Map<string, IdempotencyEntry>();

  constructor(private readonly retentionMs: number) {}

  lookup(apiKeyId: string, key: string, fingerprint: string, nowMs: number): IdempotencyLookup {
    const entry = this.get(apiKeyId, key, nowMs);
    if (entry === undefined) return { kind: 'new' };
    return entry.fingerprint === fingerprint ? { kind: 'replay', entry } : { kind: 'conflict', entry };
  }

  get(apiKeyId: string, key: string, nowMs: number): IdempotencyEntry | undefined {
    const scoped = scope(apiKeyId, key);
    const entry = this.entries.get(scoped);
    if (entry !== undefined && nowMs - entry.createdAtMs >= this.retentionMs) {
      this.entries.delete(scoped);
      return undefined;
    }
    return entry;
  }

  remember(apiKeyId: string, key: string, entry: IdempotencyEntry): void {
    this.entries.set(scope(apiKeyId, key), entry);
  }
}

function scope(apiKeyId: string, key: string): string {
  return `${apiKeyId}\u0000${key}`;
}
