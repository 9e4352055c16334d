import { randomUUID } from 'node:crypto';
import { Body, Controller, Delete, Get, Module, Param, Post } from '@nestjs/common';
import { IsString, MaxLength } from 'class-validator';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequireScope } from '../../src/auth/access.decorators';
import { assertOwnedBy, type ClientContext } from '../../src/auth/client-context';
import { CurrentClient } from '../../src/auth/current-client.decorator';
import { SCOPES, type Scope } from '../../src/auth/scopes';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

class CreateNoteDto {
  @IsString()
  @MaxLength(200)
  text: string;
}

interface Note {
  id: string;
  clientId: string;
  text: string;
}

/** Test-only owned resource, built the way orders and transaction records must be. */
@Controller('v1/test-fixtures/notes')
@RequireScope('catalog:read')
class OwnedNotesController {
  private readonly notes = new Map<string, Note>();

  @Post()
  create(@CurrentClient() client: ClientContext, @Body() body: CreateNoteDto): { id: string } {
    const note = { id: randomUUID(), clientId: client.id, text: body.text };
    this.notes.set(note.id, note);
    return { id: note.id };
  }

  @Get()
  list(@CurrentClient() client: ClientContext): { items: { id: string; text: string }[] } {
    const mine = [...this.notes.values()].filter((n) => n.clientId === client.id);
    return { items: mine.map((n) => ({ id: n.id, text: n.text })) };
  }

  @Get(':id')
  get(@CurrentClient() client: ClientContext, @Param('id') id: string): { id: string; text: string } {
    const note = assertOwnedBy(this.notes.get(id), client, 'Note');
    return { id: note.id, text: note.text };
  }

  @Delete(':id')
  remove(@CurrentClient() client: ClientContext, @Param('id') id: string): { deleted: true } {
    const note = assertOwnedBy(this.notes.get(id), client, 'Note');
    this.notes.delete(note.id);
    return { deleted: true };
  }
}

@Module({ controllers: [OwnedNotesController] })
class OwnedNotesFixtureModule {}

/** Scope sets that can use the fixture (catalog:read, directly or through admin). */
const fixtureScopes = fc
  .subarray([...SCOPES], { minLength: 1 })
  .map((s): Scope[] => (s.includes('catalog:read') || s.includes('admin') ? s : [...s, 'catalog:read']));

function withoutRequestId(body: { error: Record<string, unknown> }): unknown {
  const { requestId: _ignored, ...rest } = body.error;
  return rest;
}

describe('object-level access: one client never sees another client’s records (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, { extraModules: [OwnedNotesFixtureModule] });
  });
  afterAll(async () => {
    await t.close();
  });
  const http = () => request(t.app.getHttpServer());

  it('client B reads, lists and deletes nothing client A created (fast-check over client pairs)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fixtureScopes,
        fixtureScopes,
        fc.array(fc.string({ maxLength: 50 }), { minLength: 1, maxLength: 3 }),
        async (scopesA, scopesB, texts) => {
          const a = await issueTestKey(t.app, scopesA);
          const b = await issueTestKey(t.app, scopesB);
          const ids: string[] = [];
          for (const text of texts) {
            const res = await http()
              .post('/v1/test-fixtures/notes')
              .set(bearer(a.key))
              .send({ text })
              .expect(201);
            ids.push(res.body.id);
          }
          const missing = await http()
            .get(`/v1/test-fixtures/notes/${randomUUID()}`)
            .set(bearer(b.key))
            .expect(404);
          for (const id of ids) {
            const read = await http().get(`/v1/test-fixtures/notes/${id}`).set(bearer(b.key));
            expect(read.status).toBe(404);
            expect(withoutRequestId(read.body)).toEqual(withoutRequestId(missing.body));
            const del = await http().delete(`/v1/test-fixtures/notes/${id}`).set(bearer(b.key));
            expect(del.status).toBe(404);
          }
          const listB = await http().get('/v1/test-fixtures/notes').set(bearer(b.key)).expect(200);
          expect(listB.body.items).toEqual([]);
          // Positive control: the owner still sees all of it, untouched by B's attempts.
          const listA = await http().get('/v1/test-fixtures/notes').set(bearer(a.key)).expect(200);
          expect(listA.body.items.map((n: { id: string }) => n.id).sort()).toEqual([...ids].sort());
          for (const id of ids)
            await http().get(`/v1/test-fixtures/notes/${id}`).set(bearer(a.key)).expect(200);
        },
      ),
      { numRuns: 20 },
    );
  });

  it('keys issued over the admin API belong to the issuing admin (fast-check over admin pairs)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.subarray([...SCOPES], { minLength: 1 }), async (issuedScopes) => {
        const adminA = await issueTestKey(t.app, ['admin']);
        const adminB = await issueTestKey(t.app, ['admin']);
        const created = await http()
          .post('/v1/admin/api-clients')
          .set(bearer(adminA.key))
          .send({ name: 'owned-by-a', scopes: issuedScopes, anySubject: true })
          .expect(201);
        const id = created.body.id as string;
        await http().get(`/v1/admin/api-clients/${id}`).set(bearer(adminB.key)).expect(404);
        await http().delete(`/v1/admin/api-clients/${id}`).set(bearer(adminB.key)).expect(404);
        const listB = await http().get('/v1/admin/api-clients').set(bearer(adminB.key)).expect(200);
        expect(listB.body.items).toEqual([]);
        // B's revoke attempt changed nothing: the key still works and A still sees it unrevoked.
        await http().get('/v1/me').set(bearer(created.body.key)).expect(200);
        const seenByA = await http().get(`/v1/admin/api-clients/${id}`).set(bearer(adminA.key)).expect(200);
        expect(seenByA.body.revokedAt).toBeNull();
      }),
      { numRuns: 10 },
    );
  });
});
