import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { SCOPES } from '../../src/auth/scopes';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

describe('admin API for keys (e2e)', () => {
  let t: TestApp;
  let caller: TestClient;
  beforeAll(async () => {
    t = await startTestApp();
    caller = await issueTestKey(t.app, ['admin']);
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());

  it('issues a key shown once, lists without secrets, revokes with immediate effect', async () => {
    const admin = caller.key;
    const created = await http()
      .post('/v1/admin/api-clients')
      .set(bearer(admin))
      .send({ name: 'partner', scopes: ['catalog:read'] })
      .expect(201);
    expect(created.body.key).toMatch(/^trb_live_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
    expect(created.body.keyPrefix).toBe(created.body.key.slice(0, 19));
    expect(created.body.createdBy).toBe(caller.id);
    const newKey = created.body.key as string;
    await http().get('/v1/me').set(bearer(newKey)).expect(200);

    const list = await http().get('/v1/admin/api-clients').set(bearer(admin)).expect(200);
    expect(list.body.items.map((c: { id: string }) => c.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(newKey);
    expect(list.body.items[0]).not.toHaveProperty('key');
    const one = await http().get(`/v1/admin/api-clients/${created.body.id}`).set(bearer(admin)).expect(200);
    expect(one.body).not.toHaveProperty('key');

    const revokedRes = await http()
      .delete(`/v1/admin/api-clients/${created.body.id}`)
      .set(bearer(admin))
      .expect(200);
    expect(revokedRes.body.revokedAt).toEqual(expect.any(String));
    await http().get('/v1/me').set(bearer(newKey)).expect(401);
  });

  it('pages with a bounded limit and an opaque cursor', async () => {
    const admin = await issueTestKey(t.app, ['admin']);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await http()
        .post('/v1/admin/api-clients')
        .set(bearer(admin.key))
        .send({ name: `paged-${i}`, scopes: ['catalog:read'] })
        .expect(201);
      ids.push(res.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await http()
        .get('/v1/admin/api-clients')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(bearer(admin.key))
        .expect(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((c: { id: string }) => c.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids.toReversed());
  });

  it('revoking an admin key over HTTP revokes the keys it issued, at once', async () => {
    const root = await issueTestKey(t.app, ['admin']);
    const issue = async (key: string, scopes: string[]): Promise<{ id: string; key: string }> =>
      (
        await http()
          .post('/v1/admin/api-clients')
          .set(bearer(key))
          .send({ name: `issued-${randomUUID()}`, scopes })
          .expect(201)
      ).body as { id: string; key: string };
    const middle = await issue(root.key, ['admin']);
    const leaf = await issue(middle.key, ['catalog:read']);
    await http().get('/v1/me').set(bearer(leaf.key)).expect(200);

    await http().delete(`/v1/admin/api-clients/${middle.id}`).set(bearer(root.key)).expect(200);

    const statuses = [];
    for (const key of [middle.key, leaf.key, root.key])
      statuses.push((await http().get('/v1/me').set(bearer(key))).status);
    expect(statuses).toEqual([401, 401, 200]);
  });

  it("a cursor is bound to its query: another admin's cursor, or a tampered one, is 400", async () => {
    const owner = await issueTestKey(t.app, ['admin']);
    const other = await issueTestKey(t.app, ['admin']);
    for (let i = 0; i < 2; i++)
      await http()
        .post('/v1/admin/api-clients')
        .set(bearer(owner.key))
        .send({ name: `bound-${i}`, scopes: ['catalog:read'] })
        .expect(201);
    const first = await http()
      .get('/v1/admin/api-clients')
      .query({ limit: 1 })
      .set(bearer(owner.key))
      .expect(200);
    const cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const tampered = cursor.slice(0, 3) + (cursor[3] === 'A' ? 'B' : 'A') + cursor.slice(4);
    for (const [key, presented] of [
      [other.key, cursor],
      [owner.key, tampered],
    ] as const) {
      const res = await http()
        .get('/v1/admin/api-clients')
        .query({ cursor: presented })
        .set(bearer(key))
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details).toEqual([{ field: 'cursor', problems: [expect.any(String)] }]);
    }
  });

  it.each([
    ['limit above the bound', { limit: '101' }],
    ['limit zero', { limit: '0' }],
    ['unknown query field', { sort: 'name' }],
    ['forged cursor', { cursor: Buffer.from('1.not-a-uuid').toString('base64url') }],
    ['empty cursor', { cursor: '' }],
  ])('list rejects %s with 400', async (_name, query) => {
    const res = await http().get('/v1/admin/api-clients').query(query).set(bearer(caller.key)).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });

  it.each([
    ['no name', { scopes: ['admin'] }],
    ['name too long', { name: 'n'.repeat(101), scopes: ['admin'] }],
    ['control character in name', { name: 'a\u0000b', scopes: ['admin'] }],
    ['empty scopes', { name: 'x', scopes: [] }],
    ['unknown scope', { name: 'x', scopes: ['root'] }],
    ['duplicate scopes', { name: 'x', scopes: ['admin', 'admin'] }],
    ['too many scopes', { name: 'x', scopes: [...SCOPES, 'catalog:read'] }],
    ['unknown field (a chosen key)', { name: 'x', scopes: ['admin'], key: generateApiKey() }],
    ['mass assignment of createdBy', { name: 'x', scopes: ['admin'], createdBy: randomUUID() }],
    ['mass assignment of revokedAt', { name: 'x', scopes: ['admin'], revokedAt: null }],
  ])('create rejects %s with 400', async (_name, body) => {
    const res = await http().post('/v1/admin/api-clients').set(bearer(caller.key)).send(body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('a malformed or unknown id is the same 404', async () => {
    const a = await http().get('/v1/admin/api-clients/not-a-uuid').set(bearer(caller.key)).expect(404);
    const b = await http()
      .delete(`/v1/admin/api-clients/${randomUUID()}`)
      .set(bearer(caller.key))
      .expect(404);
    expect(a.body.error.message).toBe(b.body.error.message);
  });
});
