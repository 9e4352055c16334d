import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app';
import { CLIENT_SCHEMA_PATH, generateClientSchema } from '../support/typescript-client';

/** `npm run client:generate` runs this file with CLIENT_GENERATE=write: it writes the file, then checks it. */
const WRITE = process.env.CLIENT_GENERATE === 'write';

describe('generated TypeScript client (e2e)', () => {
  let t: TestApp;
  let served: string;
  beforeAll(async () => {
    t = await startTestApp();
    served = (await request(t.app.getHttpServer()).get('/docs/openapi.json').expect(200)).text;
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the same document on every request (nothing in it varies between runs)', async () => {
    const again = (await request(t.app.getHttpServer()).get('/docs/openapi.json').expect(200)).text;
    expect(again).toBe(served);
  });

  it('clients/typescript/schema.ts is what the served /docs/openapi.json generates', async () => {
    const generated = await generateClientSchema(JSON.parse(served));
    if (WRITE) writeFileSync(CLIENT_SCHEMA_PATH, generated);
    const committed = existsSync(CLIENT_SCHEMA_PATH) ? readFileSync(CLIENT_SCHEMA_PATH, 'utf8') : '';
    expect(
      committed,
      'clients/typescript/schema.ts is out of date with the API: run `npm run client:generate` and commit it',
    ).toBe(generated);
  });
});
