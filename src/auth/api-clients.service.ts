import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';
import { isUniqueViolation } from '../database/pg-errors';
import { UNAUTHORIZED_MESSAGE } from './auth.errors';
import { generateApiKey, hashApiKey, hashesEqual, parseApiKey } from './api-key';
import type { ApiClientEntity } from './api-client.entity';
import { ApiClientRepository, type ApiClientCredential, type ListPosition } from './api-client.repository';
import type { ClientContext } from './client-context';
import type { Scope } from './scopes';
import { bindingProblem, storedBinding, type BindingRequest, type SubjectBinding } from './subject-binding';

/** A client as shown to operators: never the key, never its hash. */
export interface ApiClientView {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: Scope[];
  /** The subjects the key may act for; null: unbound. */
  binding: SubjectBinding | null;
  /** True when the key may act for any subject (unbound: opted in, an admin key, or issued before the rule). */
  anySubject: boolean;
  createdBy: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A revoked client, with the keys it had issued (transitively) that its revocation revoked. */
export interface RevokedClient extends ApiClientView {
  alsoRevoked: string[];
}

export interface IssuedKey {
  client: ApiClientView;
  /** The only time the key exists outside the caller's hands: show it once, never store it. */
  key: string;
}

/** Why a presented key was refused. Logged (never the key); never told to the caller. */
export type AuthFailureReason = 'missing' | 'malformed' | 'unknown' | 'revoked';

export type VerifyResult = { ok: true; client: ClientContext } | { ok: false; reason: AuthFailureReason };

/** Client names show up in logs and listings: 1..100 printable characters, no control characters. */
export const CLIENT_NAME_MAX_LENGTH = 100;
export const CLIENT_NAME_PATTERN = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

export function isValidClientName(name: string): boolean {
  return (
    name.trim() === name &&
    name.length >= 1 &&
    name.length <= CLIENT_NAME_MAX_LENGTH &&
    CLIENT_NAME_PATTERN.test(name)
  );
}

/** Compared against when no row matches, so a miss costs the same HMAC + compare as a hit. */
const NO_MATCH = Buffer.alloc(32);

/** The binding stored in a row's two pattern columns (both null: unbound). */
export function bindingOf(row: {
  userSubjectPatterns: string[] | null;
  integratorSubjectPatterns: string[] | null;
}): SubjectBinding | null {
  if (row.userSubjectPatterns === null || row.integratorSubjectPatterns === null) return null;
  return { userSubjects: row.userSubjectPatterns, integratorSubjects: row.integratorSubjectPatterns };
}

export function toView(row: ApiClientEntity): ApiClientView {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    scopes: row.scopes,
    binding: bindingOf(row),
    anySubject: bindingOf(row) === null,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/** Injection token of the key-hashing pepper (AuthConfig.pepper; the `keys` CLI passes the same one). */
export const API_KEY_PEPPER = 'API_KEY_PEPPER';

/**
 * Key lifecycle (issue, verify, list, revoke). AuthModule and the `keys` CLI's KeysCliModule provide it over
 * the same repository class and pepper, so both hash keys identically (and both register the same
 * revocation listeners).
 */
@Injectable()
export class ApiClientsService {
  private readonly revocationListeners: ((clientIds: string[]) => Promise<void>)[] = [];

  constructor(
    private readonly repository: ApiClientRepository,
    @Inject(API_KEY_PEPPER) private readonly pepper: string,
  ) {}

  /**
   * `listener` runs after every revocation through this service with the ids it revoked (the key and the keys it
   * issued): webhooks disables their endpoints. A failing listener is the caller's error (the revocation stands).
   */
  onRevoked(listener: (clientIds: string[]) => Promise<void>): void {
    this.revocationListeners.push(listener);
  }

  /**
   * New random key for a new client; the key is returned once and only its hash is stored. `request`: the
   * subjects it may act for, or ANY_SUBJECT (the explicit opt-in), or null (nothing said); refused (400 naming
   * `binding`) on an admin key with a binding, a malformed pattern, or a non-admin key with a subject scope and
   * neither a binding nor the opt-in.
   */
  async issue(
    name: string,
    scopes: Scope[],
    createdBy: string | null = null,
    request: BindingRequest = null,
  ): Promise<IssuedKey> {
    const problem = bindingProblem(scopes, request);
    if (problem !== undefined) throw validationFailed([{ field: 'binding', problems: [problem] }]);
    const binding = storedBinding(request);
    for (let attempt = 1; ; attempt++) {
      const key = generateApiKey();
      try {
        const row = await this.insertKey(key, name, scopes, createdBy, binding);
        return { client: toView(row), key };
      } catch (error) {
        // A lookup-prefix collision (~2^-59 per pair) is retried with a fresh key.
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
      }
    }
  }

  /**
   * Registers a key chosen outside (BFF_BOOTSTRAP_API_KEY, the demo key file) unless a client
   * already has it. `conflict`: another client holds the same lookup prefix with a different key.
   */
  async registerExisting(
    key: string,
    name: string,
    scopes: Scope[],
  ): Promise<{ status: 'registered' | 'exists' | 'conflict'; clientId?: string }> {
    const parsed = parseApiKey(key);
    if (!parsed) throw new Error('not a well-formed API key');
    const keyHash = hashApiKey(this.pepper, key);
    const compare = (existing: ApiClientCredential | null) =>
      existing && hashesEqual(keyHash, existing.keyHash)
        ? ({ status: 'exists', clientId: existing.id } as const)
        : ({ status: 'conflict' } as const);
    const existing = await this.repository.findCredential(parsed.lookupPrefix);
    if (existing) return compare(existing);
    // Another replica may register the same key between the lookup and the insert: then it is there now.
    const row = await this.repository.insertUnlessTaken({
      name,
      keyPrefix: parsed.lookupPrefix,
      keyHash,
      scopes,
    });
    if (row) return { status: 'registered', clientId: row.id };
    return compare(await this.repository.findCredential(parsed.lookupPrefix));
  }

  /** Format and checksum first (no database work for junk), then lookup + constant-time compare. */
  async verify(presented: string): Promise<VerifyResult> {
    const parsed = parseApiKey(presented);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const hash = hashApiKey(this.pepper, parsed.key);
    const row = await this.repository.findCredential(parsed.lookupPrefix);
    const matches = hashesEqual(hash, row?.keyHash ?? NO_MATCH);
    if (!row || !matches) return { ok: false, reason: 'unknown' };
    if (row.revokedAt) return { ok: false, reason: 'revoked' };
    return { ok: true, client: { id: row.id, name: row.name, scopes: row.scopes, binding: bindingOf(row) } };
  }

  async list(
    limit: number,
    options: { createdBy?: string; after?: ListPosition } = {},
  ): Promise<ApiClientView[]> {
    const rows = await this.repository.list({ limit, createdBy: options.createdBy, after: options.after });
    return rows.map(toView);
  }

  async get(id: string, createdBy?: string): Promise<ApiClientView | null> {
    const row = await this.repository.findById(id, createdBy);
    return row ? toView(row) : null;
  }

  /** Revokes the client and every key it issued, transitively (see ApiClientRepository.revoke). */
  async revoke(id: string, createdBy?: string): Promise<RevokedClient | null> {
    const result = await this.repository.revoke(id, createdBy);
    if (!result) return null;
    const ids = [result.row.id, ...result.alsoRevoked];
    for (const listener of this.revocationListeners) await listener(ids);
    return { ...toView(result.row), alsoRevoked: result.alsoRevoked };
  }

  async touchLastUsed(id: string): Promise<void> {
    await this.repository.touchLastUsed(id);
  }

  private async insertKey(
    key: string,
    name: string,
    scopes: Scope[],
    createdBy: string | null,
    binding: SubjectBinding | null,
  ): Promise<ApiClientEntity> {
    const parsed = parseApiKey(key);
    if (!parsed) throw new Error('not a well-formed API key');
    const row = await this.repository.insert({
      name,
      keyPrefix: parsed.lookupPrefix,
      keyHash: hashApiKey(this.pepper, key),
      scopes,
      createdBy,
      userSubjectPatterns: binding?.userSubjects ?? null,
      integratorSubjectPatterns: binding?.integratorSubjects ?? null,
    });
    // The issuer was revoked after it authenticated (another replica's cache, or a racing request):
    // it is answered like any other revoked key.
    if (!row) throw new AppError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
    return row;
  }
}
