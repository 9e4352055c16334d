import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startHookServer, type HookServer } from '../../bench/chaos/webhook-receiver';

/** One request the receiver got. */
export interface ReceivedWebhook {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers: a status (with optional headers), or `hold` (no answer until released). */
export type ReceiverAnswer = number | { status: number; headers?: Record<string, string> } | 'hold';

/**
 * A webhook receiver on 127.0.0.1 (a real HTTP server): records every request (headers and raw body) and answers
 * as `answer` says (200 by default). Held answers stay open until `releaseHeld()` or close().
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: (request: ReceivedWebhook, nth: number) => ReceiverAnswer = () => 200;
  private readonly held = new Set<ServerResponse>();

  private constructor(private readonly hooks: HookServer) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | null = null;
    const hooks = await startHookServer((headers, body, res) => receiver?.handle(headers, body, res));
    receiver = new WebhookReceiver(hooks);
    return receiver;
  }

  get port(): number {
    return this.hooks.port;
  }

  get url(): string {
    return this.hooks.url;
  }

  /** The webhook-ids received, in arrival order (duplicates kept). */
  ids(): string[] {
    return this.received.map((r) => r.id);
  }

  /** How many times each webhook-id arrived. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const id of this.ids()) counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  }

  get heldCount(): number {
    return this.held.size;
  }

  releaseHeld(status = 200): void {
    for (const res of this.held) res.writeHead(status).end();
    this.held.clear();
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.held.clear();
    await this.hooks.close();
  }

  private handle(headers: IncomingHttpHeaders, body: string, res: ServerResponse): void {
    const request: ReceivedWebhook = {
      id: String(headers['webhook-id'] ?? ''),
      headers,
      body,
      at: Date.now(),
    };
    this.received.push(request);
    const answer = this.answer(request, this.received.length);
    if (answer === 'hold') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    const { status, headers: extra } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
    res
      .writeHead(status, { 'content-type': 'text/plain', ...extra })
      .end(status < 300 ? 'ok' : `answer ${status}`);
  }
}
