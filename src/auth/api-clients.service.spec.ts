import * as crypto from 'node:crypto';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { API_KEY_LENGTH, apiKeyChecksum, generateApiKey } from './api-key';
import type { ApiClientEntity } from './api-client.entity';
import type { ApiClientCredential, ApiClientRepository, NewApiClient } from './api-client.repository';
import { ApiClientsService } from './api-clients.service';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn<typeof actual.timingSafeEqual>(actual.timingSafeEqual) };
});

/** In-memory stand-in for the table: rows by lookup prefix. */
class FakeRepository {
  readonly rows = new Map<string, ApiClientEntity>();
  lookups = 0;

  async insert(client: NewApiClient): Promise<ApiClientEntity> {
    if (this.rows.has(client.keyPrefix)) throw Object.assign(new Error('duplicate'), { code: '23505' });
    const row = {
      ...client,
      id: crypto.randomUUID(),
      createdAt: new Date(),
      revokedAt: null,
      lastUsedAt: null,
    } as ApiClientEntity;
    this.rows.set(client.keyPrefix, row);
    return row;
  }

  async insertUnlessTaken(client: Omit<NewApiClient, 'createdBy'>): Promise<ApiClientEntity | null> {
    if (this.rows.has(client.keyPrefix)) return null;
    return this.insert({ ...client, createdBy: null });
  }

  /** Lookups answer "none" this many more times whatever the table holds (another replica's insert racing). */
  blindLookups = 0;

  async findCredential(prefix: string): Promise<ApiClientCredential | null> {
    this.lookups++;
    if (this.blindLookups > 0) {
      this.blindLookups--;
      return null;
    }
    return this.rows.get(prefix) ?? null;
  }

  async revoke(id: string): Promise<{ row: ApiClientEntity; alsoRevoked: string[] } | null> {
    const row = [...this.rows.values()].find((r) => r.id === id) ?? null;
    if (row) row.revokedAt ??= new Date();
    return row ? { row, alsoRevoked: [] } : null;
  }
}

type Mutation = (key: string) => string;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const position = fc.nat({ max: API_KEY_LENGTH - 1 });
const char = fc.constantFrom(...BASE62.split(''), '_', '-', '=', ' ', 'é');
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(position, char).map(
    ([i, c]): Mutation =>
      (k) =>
        k.slice(0, i) + c + k.slice(i + 1),
  ),
  fc.tuple(position, char).map(
    ([i, c]): Mutation =>
      (k) =>
        k.slice(0, i) + c + k.slice(i),
  ),
  position.map(
    (i): Mutation =>
      (k) =>
        k.slice(0, i) + k.slice(i + 1),
  ),
  position.map(
    (i): Mutation =>
      (k) =>
        i + 1 < k.length ? k.slice(0, i) + k[i + 1] + k[i] + k.slice(i + 2) : k,
  ),
  position.map(
    (i): Mutation =>
      (k) =>
        k.slice(0, i),
  ),
  position.map(
    (i): Mutation =>
      (k) =>
        k.slice(0, i) +
        (k[i] === k[i].toUpperCase() ? k[i].toLowerCase() : k[i].toUpperCase()) +
        k.slice(i + 1),
  ),
);

describe(ApiClientsService.name, () => {
  let repository: FakeRepository;
  let sut: ApiClientsService;
  beforeEach(() => {
    repository = new FakeRepository();
    sut = new ApiClientsService(repository as unknown as ApiClientRepository, 'unit-test-pepper');
    vi.mocked(crypto.timingSafeEqual).mockClear();
  });

  it('stores only the lookup prefix and the HMAC, never the key', async () => {
    const { key, client } = await sut.issue('alpha', ['catalog:read']);
    const row = [...repository.rows.values()][0];
    const stored = [
      row.id,
      row.name,
      row.keyPrefix,
      row.keyHash.toString('latin1'),
      row.scopes.join(','),
    ].join('|');
    expect(stored).not.toContain(key);
    expect(row.keyPrefix).toBe(key.slice(0, 19));
    expect(client).not.toHaveProperty('keyHash');
    expect(await sut.verify(key)).toEqual({
      ok: true,
      client: { id: client.id, name: 'alpha', scopes: ['catalog:read'], binding: null },
    });
  });

  it('stores a binding with the key and returns it on verification; an unbound key verifies with null', async () => {
    const binding = { userSubjects: ['acme-*', 'solo'], integratorSubjects: [] };
    const { key, client } = await sut.issue('bound', ['orders:write'], null, binding);
    expect(client.binding).toEqual(binding);
    const row = repository.rows.get(key.slice(0, 19));
    expect([row?.userSubjectPatterns, row?.integratorSubjectPatterns]).toEqual([['acme-*', 'solo'], []]);
    expect(await sut.verify(key)).toMatchObject({ ok: true, client: { binding } });
  });

  it.each([
    ['an admin key', ['admin'], { userSubjects: ['acme-*'], integratorSubjects: [] }],
    ['a malformed pattern', ['orders:write'], { userSubjects: ['a*b'], integratorSubjects: [] }],
    ['too many patterns', ['orders:write'], { userSubjects: [], integratorSubjects: Array(101).fill('x') }],
  ] as const)(
    'refuses a binding on %s with 400 naming binding, issuing nothing',
    async (_case, scopes, binding) => {
      const error = await sut
        .issue('bound', [...scopes], null, {
          userSubjects: [...binding.userSubjects],
          integratorSubjects: [...binding.integratorSubjects],
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'binding' }] });
      expect(repository.rows.size).toBe(0);
    },
  );

  it('any mutation of a key fails the checksum or the lookup (fast-check)', async () => {
    const { key } = await sut.issue('alpha', ['admin']);
    await fc.assert(
      fc.asyncProperty(mutation, async (mutate) => {
        const mutated = mutate(key);
        fc.pre(mutated !== key);
        const result = await sut.verify(mutated);
        expect(result.ok).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it('compares hashes in constant time on every path that reaches the database', async () => {
    const { key } = await sut.issue('alpha', ['admin']);
    const body = key.slice(0, 19) + generateApiKey().slice(19, 52);
    const samePrefixOtherSecret = `${body}_${apiKeyChecksum(body)}`;
    for (const presented of [key, samePrefixOtherSecret, generateApiKey()]) {
      vi.mocked(crypto.timingSafeEqual).mockClear();
      await sut.verify(presented);
      expect(crypto.timingSafeEqual).toHaveBeenCalledTimes(1);
      const [a, b] = vi.mocked(crypto.timingSafeEqual).mock.calls[0] as [Buffer, Buffer];
      expect([a.length, b.length]).toEqual([32, 32]);
    }
  });

  it('rejects malformed input before any lookup', async () => {
    for (const junk of ['', 'x', 'trb_live_abc', 'Bearer x', 'a'.repeat(5000)]) {
      expect(await sut.verify(junk)).toEqual({ ok: false, reason: 'malformed' });
    }
    expect(repository.lookups).toBe(0);
    expect(crypto.timingSafeEqual).not.toHaveBeenCalled();
  });

  it('distinguishes unknown and revoked keys internally (for logs only)', async () => {
    const { key, client } = await sut.issue('alpha', ['admin']);
    expect(await sut.verify(generateApiKey())).toEqual({ ok: false, reason: 'unknown' });
    await sut.revoke(client.id);
    expect(await sut.verify(key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('registers an outside key once: registered, then exists; a prefix collision is a conflict', async () => {
    const key = generateApiKey();
    expect((await sut.registerExisting(key, 'bootstrap', ['admin'])).status).toBe('registered');
    expect((await sut.registerExisting(key, 'bootstrap', ['admin'])).status).toBe('exists');
    const clash = key.slice(0, 19) + generateApiKey().slice(19, 52);
    expect((await sut.registerExisting(`${clash}_${apiKeyChecksum(clash)}`, 'x', ['admin'])).status).toBe(
      'conflict',
    );
  });

  it('registering a key another replica inserted after the lookup answers exists (or conflict), never throws', async () => {
    const key = generateApiKey();
    const first = await sut.registerExisting(key, 'bootstrap', ['admin']);
    repository.blindLookups = 1;
    expect(await sut.registerExisting(key, 'bootstrap', ['admin'])).toEqual({
      status: 'exists',
      clientId: first.clientId,
    });
    const clash = key.slice(0, 19) + generateApiKey().slice(19, 52);
    repository.blindLookups = 1;
    expect(await sut.registerExisting(`${clash}_${apiKeyChecksum(clash)}`, 'x', ['admin'])).toEqual({
      status: 'conflict',
    });
    expect(repository.rows.size).toBe(1);
  });
});
