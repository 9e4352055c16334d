import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectivePolicy } from '../../src/auth/access.decorators';
import { AuthConfig } from '../../src/config/auth.config';
import { nestRoutes, type NestRoute } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';

interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, unknown>;
}
interface Schema {
  $ref?: string;
  example?: unknown;
  enum?: unknown[];
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface Operation {
  operationId?: string;
  summary?: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, Media> };
  security?: Record<string, string[]>[];
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}
type Document = { paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> };

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponse' };
const KEY_SCHEMES = [{ bearer: [] }, { 'x-api-key': [] }];
const PAGE_SCHEMES = [{ status_session: [] }, ...KEY_SCHEMES];
/** The status page's credentialed routes (`{}` first: it also answers without one). */
const STATUS_PAGE_SECURITY: Record<string, unknown[]> = {
  'GET /status': [{}, ...PAGE_SCHEMES],
  'GET /status/panels': PAGE_SCHEMES,
  'POST /status/logout': [{}, ...PAGE_SCHEMES],
};

/** `/v1/admin/api-clients/:id` → `/v1/admin/api-clients/{id}` (OpenAPI's template syntax). */
function openApiPath(route: NestRoute): string {
  return route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/** What an operation must document, from the route's declared access and the global pipes/filter. */
function expectedErrorStatuses(route: NestRoute, op: Operation, config: AuthConfig): string[] {
  const statuses = ['500'];
  const policy = route.policy && effectivePolicy(route.policy, config);
  const keyed = route.policy?.kind !== 'public';
  // A malformed path id is answered like an unknown one (404); query and body fail validation (400).
  if (op.parameters?.some((p) => p.in !== 'path') || op.requestBody) statuses.push('400');
  if (op.requestBody) statuses.push('413', '415');
  if (keyed) statuses.push('401', '429');
  if (route.policy?.kind === 'public-if' || policy?.kind === 'scope') statuses.push('403');
  if (op.parameters?.some((p) => p.in === 'path')) statuses.push('404');
  return statuses.sort();
}

/**
 * Whether a schema yields a whole example, as Swagger UI and the generated client's readers see it: its own
 * `example`, an enum's first value, or every required property (every item; some property when none is
 * required) yielding one.
 */
function hasExample(schema: Schema | undefined, schemas: Record<string, Schema>, depth = 0): boolean {
  if (!schema || depth > 12) return false;
  if (schema.example !== undefined || schema.enum) return true;
  if (schema.$ref) return hasExample(schemas[schema.$ref.split('/').pop() ?? ''], schemas, depth + 1);
  if (schema.allOf) return schema.allOf.every((s) => hasExample(s, schemas, depth + 1));
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return variants.some((s) => hasExample(s, schemas, depth + 1));
  if (schema.items) return hasExample(schema.items, schemas, depth + 1);
  if (schema.properties) {
    const properties = schema.properties;
    const required = schema.required ?? [];
    // All optional (a PATCH body): at least one field shows how it is used.
    if (required.length === 0)
      return Object.values(properties).some((p) => hasExample(p, schemas, depth + 1));
    return required.every((name) => hasExample(properties[name], schemas, depth + 1));
  }
  return false;
}

/** A JSON media type's example: given on the media type, or derived from its schema. */
function mediaHasExample(media: Media | undefined, schemas: Record<string, Schema>): boolean {
  if (!media) return false;
  return media.example !== undefined || media.examples !== undefined || hasExample(media.schema, schemas);
}

describe('OpenAPI document (e2e)', () => {
  let t: TestApp;
  let doc: Document;
  beforeAll(async () => {
    t = await startTestApp();
    doc = (await request(t.app.getHttpServer()).get('/docs/openapi.json').expect(200)).body as Document;
  });
  afterAll(async () => {
    await t.close();
  });

  it('documents both key headers in OpenAPI', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      'x-api-key': { type: 'apiKey', in: 'header', name: 'x-api-key' },
      status_session: { type: 'apiKey', in: 'cookie', name: 'bff_status_session' },
    });
  });

  it('documents every route, and nothing else', () => {
    const routes = nestRoutes(t.app).map((r) => `${r.method.toLowerCase()} ${openApiPath(r)}`);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(routes.sort());
  });

  it("documents every operation's security and error responses, each with the ErrorResponse schema", () => {
    const config = t.app.get(AuthConfig);
    const problems: string[] = [];
    for (const route of nestRoutes(t.app)) {
      const name = `${route.method} ${route.path}`;
      const op = doc.paths[openApiPath(route)]?.[route.method.toLowerCase()];
      if (!op) {
        problems.push(`${name}: not documented`);
        continue;
      }
      if (!op.summary) problems.push(`${name}: no summary`);
      if (!Object.keys(op.responses).some((s) => s.startsWith('2')))
        problems.push(`${name}: no 2xx response`);
      const errors = Object.keys(op.responses).filter((s) => !s.startsWith('2'));
      const missing = expectedErrorStatuses(route, op, config).filter((s) => !errors.includes(s));
      if (missing.length > 0) problems.push(`${name}: error responses ${missing.join(', ')} not documented`);
      for (const status of errors) {
        const response = op.responses[status];
        if (!response.description) problems.push(`${name} ${status}: no description`);
        if (JSON.stringify(response.content?.['application/json']?.schema) !== JSON.stringify(ERROR_REF))
          problems.push(`${name} ${status}: not the ErrorResponse schema`);
      }
      const policy = route.policy?.kind;
      const security = op.security ?? [];
      // The status page is public to the access guard but checks credentials itself (StatusAccess): its routes
      // that take one declare the cookie and both key schemes (issue 31 item 5); the others declare none.
      const page = STATUS_PAGE_SECURITY[name];
      if (page !== undefined) {
        if (JSON.stringify(security) !== JSON.stringify(page))
          problems.push(`${name}: security is not ${JSON.stringify(page)}`);
      } else if (policy === 'public' && security.length > 0)
        problems.push(`${name}: public but documents a key`);
      if (policy === 'authenticated' || policy === 'scope') {
        if (JSON.stringify(security) !== JSON.stringify(KEY_SCHEMES))
          problems.push(`${name}: security is not Bearer or x-api-key`);
      }
      if (policy === 'public-if' && JSON.stringify(security) !== JSON.stringify([{}, ...KEY_SCHEMES]))
        problems.push(`${name}: security is not "none, Bearer or x-api-key"`);
    }
    expect(problems).toEqual([]);
  });

  it('every route that takes a subject declares it for key bindings, and documents SUBJECT_NOT_ALLOWED naming it', () => {
    const schemas = (doc.components.schemas ?? {}) as Record<
      string,
      { properties?: Record<string, unknown> }
    >;
    /** Body fields of an operation (its schema, resolved when it is a reference). */
    const bodyFields = (op: Operation): string[] => {
      const body = op.requestBody as
        | { content?: Record<string, { schema?: { $ref?: string; properties?: Record<string, unknown> } }> }
        | undefined;
      const schema = body?.content?.['application/json']?.schema;
      const resolved = schema?.$ref ? schemas[schema.$ref.split('/').pop() ?? ''] : schema;
      return Object.keys(resolved?.properties ?? {});
    };
    const problems: string[] = [];
    let declared = 0;
    for (const route of nestRoutes(t.app)) {
      const name = `${route.method} ${route.path}`;
      const op = doc.paths[openApiPath(route)]?.[route.method.toLowerCase()];
      if (!op) continue;
      const named = [
        ...(op.parameters ?? []).filter((p) => p.in === 'path').map((p) => `path ${p.name}`),
        ...bodyFields(op).map((field) => `body ${field}`),
      ]
        // `anySubject` (key creation) is a boolean opt-in, not a subject the route acts for.
        .filter((input) => /subject/i.test(input) && input !== 'body anySubject');
      const subject = route.policy?.kind === 'scope' ? route.policy.subject : undefined;
      const declaredInput = subject ? [`${subject.in} ${subject.field}`] : [];
      if (JSON.stringify(named) !== JSON.stringify(declaredInput))
        problems.push(`${name}: takes [${named.join(', ')}], declares [${declaredInput.join(', ')}]`);
      if (subject) {
        declared++;
        const forbidden = op.responses['403']?.description ?? '';
        if (!forbidden.includes('SUBJECT_NOT_ALLOWED') || !forbidden.includes(`\`${subject.field}\``))
          problems.push(`${name}: 403 does not document SUBJECT_NOT_ALLOWED naming ${subject.field}`);
      }
    }
    expect(problems).toEqual([]);
    // Checkout, listing, cancelling, signing as a user and as an integrator, watching for a user.
    expect(declared).toBe(6);
  });

  it('gives every /v1 operation a unique camelCase operationId (the generated client names them)', () => {
    const problems: string[] = [];
    const seen = new Map<string, string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        const id = op.operationId ?? '';
        // Nest's default is `<Controller>_<handler>`: an explicit id is plain camelCase.
        if (!/^[a-z][A-Za-z0-9]*$/.test(id))
          problems.push(`${name}: operationId "${id}" is not explicit camelCase`);
        const other = seen.get(id);
        if (other) problems.push(`${name}: operationId "${id}" is also ${other}'s`);
        seen.set(id, name);
      }
    }
    expect(problems).toEqual([]);
  });

  it('documents every /v1 success answer with a JSON schema and an example, and every request body with an example', () => {
    const schemas = (doc.components.schemas ?? {}) as Record<string, Schema>;
    const problems: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        for (const [status, response] of Object.entries(op.responses)) {
          if (!status.startsWith('2') || status === '204') continue;
          const media = response.content?.['application/json'];
          if (!media?.schema) problems.push(`${name} ${status}: no JSON schema`);
          else if (!mediaHasExample(media, schemas)) problems.push(`${name} ${status}: no example`);
        }
        if (op.requestBody && !mediaHasExample(op.requestBody.content?.['application/json'], schemas))
          problems.push(`${name}: request body has no example`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('describes the error shape the filter sends', () => {
    expect(doc.components.schemas).toMatchObject({
      ErrorResponse: {
        required: ['error'],
        properties: { error: { required: ['code', 'message', 'requestId'] } },
      },
    });
  });
});
