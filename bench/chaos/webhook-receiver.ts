import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { seededRandom } from './orders-client';
import type { ReceivedEvent } from './webhook-audit';

/** A loopback HTTP server handing each request's headers and whole body to `handle`; its `url` ends in `/hooks`. */
export interface HookServer {
  readonly port: number;
  readonly url: string;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

export type HookHandler = (headers: IncomingHttpHeaders, body: string, res: ServerResponse) => void;

/** The server both webhook receivers stand on (this chaos one and test/support/webhook-receiver.ts). */
export async function startHookServer(handle: HookHandler): Promise<HookServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req.headers, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ReceiverOptions {
  /** Seeds which deliveries get a 500 or a slow answer. */
  seed: string;
  /** Share of events whose first try is answered 500 (each event at most once). */
  failShare: number;
  /** Share of events whose first try is answered 2xx only after `slowMs` (below the send timeout). */
  slowShare: number;
  slowMs: number;
  /**
   * A 500 is injected only on a try that arrives within this long of the event's `occurred_at`: below the
   * service's delivery lease, so it can only be the event's first try (a try after a lost one comes a lease
   * later). A first try refused is retried after 5 s; a second failure would wait 5 min (docs/webhooks.md).
   */
  freshMs: number;
}

/** What the receiver did, counted over the run. */
export interface ReceiverTally {
  requests: number;
  /**
   * Requests refused: the standardwebhooks package did not verify them (bad or missing signature, timestamp out
   * of tolerance), or the body is not an envelope whose `id` is the `webhook-id`.
   */
  badSignatures: number;
  /** First tries answered 500 on purpose. */
  injectedFailures: number;
  /** First tries answered 2xx after `slowMs`. */
  slowAnswers: number;
}

export interface Envelope {
  id: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/**
 * The chaos run's webhook receiver: a real HTTP server on 127.0.0.1 registered as the run's endpoint. Every
 * request is verified with the `standardwebhooks` package and the endpoint's secret (a refused one is answered
 * 400 and counted), recorded as (webhook-id, type, data) and answered 200 — except a seeded share of first tries
 * answered 500 (the service must retry with the same id) and a share of first tries answered slowly (within the
 * send timeout). Each event is made to fail at most once: its retry comes after 5 s, a second one after minutes.
 */
export class ChaosWebhookReceiver {
  readonly received: ReceivedEvent[] = [];
  readonly tally: ReceiverTally = { requests: 0, badSignatures: 0, injectedFailures: 0, slowAnswers: 0 };
  private verifier: Webhook | null = null;
  private readonly seen = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly rng: () => number;

  private constructor(
    private readonly hooks: HookServer,
    private readonly options: ReceiverOptions,
  ) {
    this.rng = seededRandom(`webhooks|${options.seed}`);
  }

  static async start(options: ReceiverOptions): Promise<ChaosWebhookReceiver> {
    let receiver: ChaosWebhookReceiver | null = null;
    const hooks = await startHookServer((headers, body, res) => receiver?.handle(headers, body, res));
    receiver = new ChaosWebhookReceiver(hooks, options);
    return receiver;
  }

  get port(): number {
    return this.hooks.port;
  }

  get url(): string {
    return this.hooks.url;
  }

  /** The endpoint's secret (`whsec_…`, from the registration's answer); until then every request is refused. */
  verifyWith(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.hooks.close();
  }

  private handle(headers: IncomingHttpHeaders, body: string, res: ServerResponse): void {
    this.tally.requests++;
    const envelope = this.verified(headers, body);
    if (!envelope) {
      this.tally.badSignatures++;
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad signature');
      return;
    }
    const first = !this.seen.has(envelope.id);
    this.seen.add(envelope.id);
    const fresh = Date.now() - Date.parse(envelope.occurred_at) < this.options.freshMs;
    const draw = this.rng();
    const event = { id: envelope.id, type: envelope.type, data: envelope.data };
    if (first && fresh && draw < this.options.failShare) {
      this.tally.injectedFailures++;
      this.received.push({ ...event, acknowledged: false });
      res.writeHead(500, { 'content-type': 'text/plain' }).end('injected failure');
      return;
    }
    this.received.push({ ...event, acknowledged: true });
    if (first && draw >= this.options.failShare && draw < this.options.failShare + this.options.slowShare) {
      this.tally.slowAnswers++;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }, this.options.slowMs);
      this.timers.add(timer);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  }

  /** The envelope when the signature verifies (and the body is an envelope), else null. */
  private verified(headers: IncomingHttpHeaders, body: string): Envelope | null {
    return this.verifier ? verifiedEnvelope(this.verifier, headers, body) : null;
  }
}

/**
 * The envelope of a delivery when its signature verifies with `verifier` (the `standardwebhooks` package and the
 * endpoint's secret: bad or missing signature, timestamp out of tolerance) and the body is an envelope whose `id`
 * is the `webhook-id`; else null. Shared by the chaos receiver and the webhooks bench's receivers.
 */
export function verifiedEnvelope(
  verifier: Webhook,
  headers: IncomingHttpHeaders,
  body: string,
): Envelope | null {
  const h: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headers[name];
    if (typeof value !== 'string') return null;
    h[name] = value;
  }
  try {
    const envelope = verifier.verify(body, h) as Partial<Envelope> | null;
    if (
      !envelope ||
      envelope.id !== h['webhook-id'] ||
      typeof envelope.type !== 'string' ||
      typeof envelope.occurred_at !== 'string' ||
      typeof envelope.data !== 'object' ||
      envelope.data === null
    )
      return null;
    return envelope as Envelope;
  } catch {
    return null;
  }
}
