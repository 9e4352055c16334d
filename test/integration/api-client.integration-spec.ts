import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key';
import { ApiClientEntity } from '../../src/auth/api-client.entity';
import { ApiClientRepository } from '../../src/auth/api-client.repository';
import { ApiClientsService } from '../../src/auth/api-clients.service';
import { ANY_SUBJECT } from '../../src/auth/subject-binding';
import { openTestDataSource, type TestDataSource } from '../support/test-database';

const PEPPER = 'integration-test-pepper-0123456789abcdef';

describe(ApiClientRepository.name, () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let sut: ApiClientsService;
  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 2, entities: [ApiClientEntity] });
    dataSource = db.dataSource;
    sut = new ApiClientsService(new ApiClientRepository(dataSource), PEPPER);
  });
  afterAll(() => db?.close());

  it('stores name, prefix, HMAC and scopes; the key itself is in no column', async () => {
    const { key, client } = await sut.issue('stored', ['catalog:read', 'orders:write'], null, ANY_SUBJECT);
    const [row] = await dataSource.query<Record<string, unknown>[]>(
      'SELECT * FROM api_clients WHERE id = $1',
      [client.id],
    );
    expect(row).toMatchObject({
      name: 'stored',
      key_prefix: key.slice(0, 19),
      scopes: ['catalog:read', 'orders:write'],
      created_by: null,
      revoked_at: null,
    });
    expect((row.key_hash as Buffer).equals(hashApiKey(PEPPER, key))).toBe(true);
    const asText = JSON.stringify({ ...row, key_hash: (row.key_hash as Buffer).toString('latin1') });
    expect(asText).not.toContain(key);
    expect(asText).not.toContain(key.slice(19));
  });

  it('verifies, then refuses after revocation; revoking twice keeps the first time', async () => {
    const { key, client } = await sut.issue('revocable', ['admin']);
    expect((await sut.verify(key)).ok).toBe(true);
    const first = await sut.revoke(client.id);
    expect(first?.revokedAt).toBeInstanceOf(Date);
    const second = await sut.revoke(client.id);
    expect(second?.revokedAt?.getTime()).toBe(first?.revokedAt?.getTime());
    expect(await sut.verify(key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('replicas registering the same bootstrap key at once: one registers it, the others find it, one row', async () => {
    const key = generateApiKey();
    const replicas = Array.from(
      { length: 6 },
      () => new ApiClientsService(new ApiClientRepository(dataSource), PEPPER),
    );
    const results = await Promise.all(
      replicas.map((replica) => replica.registerExisting(key, 'boot', ['admin'])),
    );
    expect(results.filter((r) => r.status === 'registered')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'exists')).toHaveLength(5);
    expect(new Set(results.map((r) => r.clientId)).size).toBe(1);
    const rows = await dataSource.query<unknown[]>('SELECT 1 FROM api_clients WHERE key_prefix = $1', [
      key.slice(0, 19),
    ]);
    expect(rows).toHaveLength(1);
  });

  it('enforces unique prefixes and hashes, non-empty scopes and bounded names in SQL', async () => {
    const key = generateApiKey();
    await sut.registerExisting(key, 'once', ['admin']);
    const repo = new ApiClientRepository(dataSource);
    const dup = {
      name: 'dup',
      keyPrefix: key.slice(0, 19),
      keyHash: hashApiKey(PEPPER, generateApiKey()),
      scopes: ['admin' as const],
      createdBy: null,
    };
    await expect(repo.insert(dup)).rejects.toMatchObject({ code: '23505' });
    const base = {
      keyPrefix: generateApiKey().slice(0, 19),
      keyHash: hashApiKey(PEPPER, generateApiKey()),
      createdBy: null,
    };
    await expect(repo.insert({ ...base, name: 'none', scopes: [] })).rejects.toMatchObject({ code: '23514' });
    await expect(repo.insert({ ...base, name: 'n'.repeat(101), scopes: ['admin'] })).rejects.toMatchObject({
      code: '23514',
    });
    await expect(
      repo.insert({ ...base, name: 'short hash', scopes: ['admin'], keyHash: Buffer.alloc(8) }),
    ).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('lists by issuer, newest first, with a keyset position that skips nothing', async () => {
    const admin = await sut.issue('issuer', ['admin']);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await sut.issue(`child-${i}`, ['catalog:read'], admin.client.id)).client.id);
    const seen: string[] = [];
    let after: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const page = await sut.list(3, { createdBy: admin.client.id, after });
      seen.push(...page.map((c) => c.id));
      const last = page.at(-1);
      if (page.length < 3 || !last) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).toEqual(ids.toReversed());
    expect(await sut.get(ids[0], admin.client.id)).not.toBeNull();
    expect(await sut.get(ids[0], ids[1])).toBeNull();
    expect(await sut.revoke(ids[0], ids[1])).toBeNull();
  });

  it('revoking a key revokes every key it issued, transitively, and only those', async () => {
    const root = await sut.issue('root-admin', ['admin']);
    const child = await sut.issue('child-admin', ['admin'], root.client.id);
    const grandchild = await sut.issue('grandchild', ['catalog:read'], child.client.id);
    const alreadyRevoked = await sut.issue('already-revoked', ['catalog:read'], child.client.id);
    const firstRevocation = await sut.revoke(alreadyRevoked.client.id);
    const sibling = await sut.issue('unrelated', ['catalog:read']);

    const revoked = await sut.revoke(root.client.id);

    expect(revoked?.id).toBe(root.client.id);
    expect(revoked?.alsoRevoked.toSorted()).toEqual([child.client.id, grandchild.client.id].toSorted());
    for (const { key } of [root, child, grandchild])
      expect(await sut.verify(key)).toEqual({ ok: false, reason: 'revoked' });
    expect((await sut.verify(sibling.key)).ok).toBe(true);
    expect((await sut.get(alreadyRevoked.client.id))?.revokedAt?.getTime()).toBe(
      firstRevocation?.revokedAt?.getTime(),
    );
  });

  it('a revoked issuer issues nothing, and issue racing revoke never leaves a live key behind', async () => {
    const revokedAdmin = await sut.issue('revoked-admin', ['admin']);
    await sut.revoke(revokedAdmin.client.id);
    await expect(sut.issue('late', ['catalog:read'], revokedAdmin.client.id)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });

    // Issue and revoke race: whichever order the database serialises them in, no key issued by the
    // revoked admin is left live.
    const racing = await sut.issue('racing-admin', ['admin']);
    const issues = Array.from({ length: 8 }, (_, i) =>
      sut.issue(`racer-${i}`, ['catalog:read'], racing.client.id),
    );
    await Promise.allSettled([...issues, sut.revoke(racing.client.id)]);
    const live = await dataSource.query<unknown[]>(
      'SELECT id FROM api_clients WHERE created_by = ANY($1::uuid[]) AND revoked_at IS NULL',
      [[revokedAdmin.client.id, racing.client.id]],
    );
    expect(live).toEqual([]);
  });

  it('records last use', async () => {
    const { client } = await sut.issue('used', ['catalog:read']);
    await sut.touchLastUsed(client.id);
    expect((await sut.get(client.id))?.lastUsedAt).toBeInstanceOf(Date);
  });
});
