import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { WebhooksConfig } from '../config/webhooks.config';
import { AddressPolicy, bareHost } from './address.policy';
import { HostResolver, type ResolvedAddress } from './host.resolver';
import { SenderAgents } from './sender-agents';

/** Longest response excerpt kept in the delivery log. */
export const EXCERPT_MAX_CHARS = 500;
const EXCERPT_READ_BYTES = 2048;
const USER_AGENT = 'ticket-resale-bff-webhooks/1';

/** What one send came to. */
export type SendOutcome =
  /** The receiver answered (any status: only 2xx counts as delivered; 3xx is never followed). */
  | { kind: 'response'; status: number; excerpt: string; durationMs: number }
  /**
   * No answer: DNS, connection, TLS, timeout. `reason` is generic (the delivery log, which the tenant reads, never
   * shows our resolver's or network's answers); `detail` is the error itself, for the server log only.
   */
  | { kind: 'error'; reason: string; detail: string; durationMs: number }
  /** Not sent: the host resolves to an address the SSRF guard refuses (`detail`, with the address: server log only). */
  | { kind: 'refused'; reason: string; detail: string; durationMs: number };

/** What the delivery log says of a refusal by the SSRF guard (never the address the name resolved to). */
export const REFUSED_REASON =
  'refused by the SSRF guard: the host resolves to an address webhooks are not sent to';

/** Printable text only, cut to EXCERPT_MAX_CHARS (a receiver's answer goes into the delivery log). */
export function excerptOf(bytes: Buffer): string {
  const text = bytes
    .toString('utf8')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text.length > EXCERPT_MAX_CHARS ? `${text.slice(0, EXCERPT_MAX_CHARS - 1)}…` : text;
}

/**
 * The one outbound HTTP client of webhooks (not the upstream: marketplace receivers, so not UpstreamClient). One
 * POST, no redirects followed, bounded by WEBHOOKS_DELIVERY_TIMEOUT_MS from resolution to the response's first
 * bytes. SSRF guard: the host is resolved here, at every send, every address checked against AddressPolicy, and
 * the connection is pinned to the checked address (no second resolution a rebinding DNS server could answer
 * differently). Connections are kept alive per endpoint origin and checked address (SenderAgents), so a send to a
 * receiver that keeps them open costs no TCP (or TLS) handshake.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agents = new SenderAgents();

  constructor(
    private readonly resolver: HostResolver,
    private readonly policy: AddressPolicy,
    private readonly config: WebhooksConfig,
  ) {}

  /** After the delivery worker's sends ended (its loop stops in onModuleDestroy): the kept connections close. */
  onApplicationShutdown(): void {
    this.agents.destroy();
  }

  async send(rawUrl: string, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const signal = AbortSignal.timeout(this.config.WEBHOOKS_DELIVERY_TIMEOUT_MS);
    const url = new URL(rawUrl);
    let target: ResolvedAddress;
    try {
      const addresses = await this.addressesOf(url.hostname, signal);
      const refusals = addresses.map((a) => this.policy.refusal(a.address)).filter((r) => r !== null);
      const first = addresses[0];
      if (refusals.length > 0 || first === undefined)
        return {
          kind: 'refused',
          reason: first === undefined ? 'the host has no address' : REFUSED_REASON,
          detail: refusals[0] ?? 'the host has no address',
          durationMs: elapsed(),
        };
      target = first;
    } catch (error) {
      return { kind: 'error', ...reasonOf(error, signal, this.config), durationMs: elapsed() };
    }
    try {
      const { status, excerpt } = await this.post(url, target, headers, body, signal);
      return { kind: 'response', status, excerpt, durationMs: elapsed() };
    } catch (error) {
      return { kind: 'error', ...reasonOf(error, signal, this.config), durationMs: elapsed() };
    }
  }

  private async addressesOf(hostname: string, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const literal = bareHost(hostname);
    const family = isIP(literal);
    if (family !== 0) return [{ address: literal, family: family === 6 ? 6 : 4 }];
    signal.throwIfAborted();
    return new Promise<ResolvedAddress[]>((resolve, reject) => {
      const aborted = (): void => reject(signal.reason as Error);
      signal.addEventListener('abort', aborted, { once: true });
      this.resolver
        .resolve(literal)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', aborted));
    });
  }

  private async post(
    url: URL,
    target: ResolvedAddress,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number; excerpt: string }> {
    const agent = this.agents.agentFor(url, target);
    try {
      return await this.request(url, target, headers, body, signal, agent);
    } catch (error) {
      // A kept-alive connection the receiver closed while idle fails at reuse, before any answer: not the
      // receiver's failure. Sent again once on a new connection (same webhook-id: receivers dedupe by it).
      if (!(error instanceof ReusedSocketError) || signal.aborted) throw unwrap(error);
      this.agents.dropIdle(agent);
      return this.request(url, target, headers, body, signal, false).catch((e: unknown) => {
        throw unwrap(e);
      });
    }
  }

  private request(
    url: URL,
    target: ResolvedAddress,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    agent: http.Agent | false,
  ): Promise<{ status: number; excerpt: string }> {
    // The connection goes to the address just checked, whatever the name resolves to by now (a kept-alive one was
    // opened to that same address: SenderAgents is keyed by it).
    const pinned = ((_host, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    }) as LookupFunction;
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      let answered = false;
      const request = transport.request(
        url,
        {
          method: 'POST',
          agent,
          lookup: pinned,
          signal,
          headers: {
            ...headers,
            'user-agent': USER_AGENT,
            ...(agent === false ? { connection: 'close' } : {}),
            'content-length': String(Buffer.byteLength(body)),
          },
        },
        (response) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          const done = (): void =>
            resolve({ status: response.statusCode ?? 0, excerpt: excerptOf(Buffer.concat(chunks)) });
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            // A long answer is not read to its end: its connection is closed rather than kept.
            if (size >= EXCERPT_READ_BYTES) {
              response.destroy();
              done();
            }
          });
          // Read to the end, the connection goes back to its agent for the next send.
          response.on('end', done);
          response.on('error', done);
        },
      );
      request.on('error', (error) =>
        reject(!answered && request.reusedSocket ? new ReusedSocketError(error) : error),
      );
      request.end(body);
    });
  }
}

/** A send on a reused kept-alive connection failed before any answer (the receiver had closed it). */
class ReusedSocketError extends Error {
  constructor(readonly original: Error) {
    super(original.message);
  }
}

function unwrap(error: unknown): unknown {
  return error instanceof ReusedSocketError ? error.original : error;
}

/** Generic reasons by error code: what a tenant may read of our network's answer. */
const GENERIC_REASONS: [RegExp, string][] = [
  [/^ECONNREFUSED$/, 'connection refused'],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NODATA|EAI_NONAME|EAI_FAIL)$/, 'host name not resolved'],
  [/^(ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_SOCKET)$/, 'connection reset'],
  [/^(ETIMEDOUT|ESOCKETTIMEDOUT)$/, 'connection timed out'],
  [/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)$/, 'host unreachable'],
  [/(CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO)/, 'TLS handshake failed'],
  [/^HPE_/, 'invalid HTTP response'],
];

/**
 * The delivery log's reason for a send that got no answer (generic: never an address, host name or our resolver's
 * wording) and the detail for the server log.
 */
export function reasonOf(
  error: unknown,
  signal: AbortSignal,
  config: Pick<WebhooksConfig, 'WEBHOOKS_DELIVERY_TIMEOUT_MS'>,
): { reason: string; detail: string } {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const detail = excerptOf(Buffer.from(typeof code === 'string' ? `${code}: ${message}` : message));
  if (signal.aborted) return { reason: `no answer within ${config.WEBHOOKS_DELIVERY_TIMEOUT_MS} ms`, detail };
  const generic =
    typeof code === 'string' ? GENERIC_REASONS.find(([pattern]) => pattern.test(code))?.[1] : undefined;
  return { reason: generic ?? 'connection failed', detail };
}
