import { expect } from 'vitest';
import type { ListingView } from '../../../src/sandbox/admin.types';
import { OffsetClock } from '../../../src/sandbox/sandbox.clock';
import type { SandboxOptions } from '../../../src/sandbox/sandbox.options';
import { startSandbox, type SandboxHandle } from '../../../src/sandbox/sandbox.server';
import { schemaErrors, upstreamOpenApi } from '../../support/upstream-openapi';

const openapi = upstreamOpenApi;
export { schemaErrors };

export function expectSchema(schema: string, data: unknown): void {
  expect({ schema, errors: schemaErrors(schema, data) }).toEqual({ schema, errors: [] });
}

const operations = Object.entries(openapi.paths).map(([template, item]) => ({
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]*')}$`),
  item,
}));

/**
 * Checks one response of a contract operation against the OpenAPI file: the status is declared for that
 * operation, a body's media type is declared for that status and a JSON body fits the declared schema. Error
 * statuses may have no body (contract part 7); a 200 always has one. Paths the file does not describe
 * (admin routes, unknown paths) give no problems.
 */
export function openapiResponseErrors(
  method: string,
  url: string,
  response: { status: number; contentType: string | null; text: string },
): unknown[] {
  const path = url.split('?')[0];
  const operation = operations.find((o) => o.pattern.test(path))?.item[method.toLowerCase()];
  if (operation === undefined) return [];
  let spec = operation.responses[String(response.status)];
  if (spec === undefined) return [`status ${response.status} is not declared for ${method} ${path}`];
  if (spec.$ref !== undefined) spec = openapi.components.responses[spec.$ref.split('/').at(-1) as string];
  if (response.text === '') return response.status === 200 ? ['a 200 response needs a body'] : [];
  const mediaType = (response.contentType ?? '').split(';')[0].trim();
  const media = spec.content?.[mediaType];
  if (media === undefined)
    return [`media type ${mediaType || '(none)'} is not declared for ${response.status}`];
  if (media.schema.$ref === undefined) return media.schema.type === 'string' ? [] : ['unexpected schema'];
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return ['body is not JSON'];
  }
  return schemaErrors(media.schema.$ref.split('/').at(-1) as string, body);
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as a JSON object; callers narrow it with `as`. */
  json(): Record<string, unknown>;
}

/**
 * A started sandbox with a frozen clock (time moves only through advanceTime) and small HTTP helpers. Every
 * response to a contract operation is checked against the OpenAPI file (openapiResponseErrors).
 */
export class TestSandbox {
  private constructor(readonly handle: SandboxHandle) {}

  static async start(options: SandboxOptions = {}): Promise<TestSandbox> {
    const handle = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      events: 10,
      listings: 300,
      seed: 'contract-tests',
      clock: new OffsetClock({ frozen: true, startMs: Date.UTC(2030, 0, 1) }),
      ...options,
    });
    return new TestSandbox(handle);
  }

  get admin(): SandboxHandle['admin'] {
    return this.handle.admin;
  }

  async request(
    method: string,
    path: string,
    init: {
      key?: string | null;
      headers?: Record<string, string>;
      body?: unknown;
      rawBody?: string;
      /** Skip the OpenAPI check, for faults that break the contract on purpose (malformed JSON). */
      unchecked?: boolean;
    } = {},
  ): Promise<HttpResult> {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? this.admin.apiKey : init.key;
    if (key !== null) headers['x-api-key'] = key;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined && headers['content-type'] === undefined)
      headers['content-type'] = 'application/json';
    const response = await fetch(`${this.handle.url}${path}`, { method, headers, body });
    const text = await response.text();
    if (init.unchecked !== true) {
      const contentType = response.headers.get('content-type');
      const errors = openapiResponseErrors(method, path, { status: response.status, contentType, text });
      if (errors.length > 0) {
        throw new Error(
          `${method} ${path} ${response.status} breaks the OpenAPI file: ${JSON.stringify(errors)}`,
        );
      }
    }
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: () => JSON.parse(text) as Record<string, unknown>,
    };
  }

  get(path: string, key?: string | null): Promise<HttpResult> {
    return this.request('GET', path, { key });
  }

  sign(
    kind: 'users' | 'integrators',
    subject: string,
    idempotencyKey: string | undefined,
    body: unknown,
    key?: string,
  ): Promise<HttpResult> {
    const headers: Record<string, string> =
      idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey };
    return this.request('POST', `/wallets/${kind}/${encodeURIComponent(subject)}/signatures`, {
      key,
      headers,
      body,
    });
  }

  submit(body: unknown, key?: string): Promise<HttpResult> {
    return this.request('POST', '/transactions/submissions', { key, body });
  }

  async firstListings(limit = 5, query = ''): Promise<ListingView[]> {
    const page = await this.get(`/indexer/listings/active?limit=${limit}${query}`);
    return (page.json() as { items: ListingView[] }).items;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** accept_offer_v2 params that buy `listing` as the custodial user wallet of `buyerSubject`. */
export function acceptParams(
  sandbox: TestSandbox,
  listing: ListingView,
  buyerSubject: string,
): Record<string, unknown> {
  return {
    event_id: listing.event_id,
    ticket_id: listing.ticket_id,
    permit_version: listing.permit_version,
    buyer: sandbox.admin.userWalletAddress(buyerSubject),
    integrator_authority: sandbox.admin.integratorWalletAddress('sandbox-integrator'),
    seller_payout: listing.seller_payout,
    royalty_destinations: listing.royalty_destinations,
    ticket_type_config: listing.ticket_type_config,
    integrator_identity: listing.listing_integrator_identity,
    stablecoin_mint: listing.stablecoin_mint,
  };
}

export function batch(instruction: string, params: unknown[]): unknown {
  return { platformInstructions: { instruction, params } };
}
