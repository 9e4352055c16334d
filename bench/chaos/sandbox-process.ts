import { waitFor, type Managed, type ProcessGroup } from './processes';

/** The sandbox's documented local defaults (docs/sandbox.md): test-money credentials, not secrets. */
export const SANDBOX_API_KEY = 'trk_test_sandbox_full_access_0000000000000001';
/** The read-only key: the freshness bench's service under test reads with it, so its upstream requests are its own. */
export const SANDBOX_READONLY_API_KEY = 'trk_test_sandbox_read_only_00000000000000002';
export const SANDBOX_ADMIN_KEY = 'sandbox-admin-local-only';

export interface SandboxProcessOptions {
  seed: string;
  /** Generated background dataset (the chaos listings are created through the admin API). */
  events?: number;
  listings?: number;
  landingDelayMs?: number;
  /** How long to wait for it to listen (default 30 s; generating 1,000,000 listings on a loaded machine takes longer). */
  startTimeoutMs?: number;
}

export interface LedgerTransaction {
  custodialTransactionId: string;
  transactionSignature: string;
  state: string;
  failureReason: string | null;
  instruction: string;
  walletKind: string;
  subject: string;
  idempotencyKey: string;
  items: { event_id: string; ticket_id: string }[];
  /** Sandbox time a confirmed or landed_with_error transaction landed; null otherwise. */
  landedAtMs: number | null;
}

export interface SeededListing {
  event_id: string;
  ticket_id: string;
  ask_price_minor: string;
}

/** The standalone sandbox (`node dist/src/sandbox/sandbox.main.js`) and its admin API over HTTP. */
export class SandboxProcess {
  private constructor(
    readonly proc: Managed,
    readonly url: string,
  ) {}

  static async start(group: ProcessGroup, options: SandboxProcessOptions): Promise<SandboxProcess> {
    const proc = group.spawn('sandbox', ['dist/src/sandbox/sandbox.main.js'], {
      SANDBOX_PORT: '0',
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_SEED: options.seed,
      SANDBOX_EVENTS: String(options.events ?? 5),
      SANDBOX_LISTINGS: String(options.listings ?? 50),
      SANDBOX_LANDING_DELAY_MS: String(options.landingDelayMs ?? 1500),
    });
    let url = '';
    await waitFor(
      'sandbox listening',
      () => {
        if (proc.exited()) throw new Error(`sandbox exited while starting:\n${proc.output()}`);
        url = /listening on (http:\/\/\S+)/.exec(proc.output())?.[1] ?? '';
        return url !== '';
      },
      options.startTimeoutMs ?? 30_000,
      50,
    );
    return new SandboxProcess(proc, url);
  }

  async admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}/__sandbox${path}`, {
      method,
      headers: {
        'x-sandbox-admin-key': SANDBOX_ADMIN_KEY,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`sandbox admin ${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }

  async userAddress(subject: string): Promise<string> {
    return (await this.admin<{ address: string }>('GET', `/wallets/users/${encodeURIComponent(subject)}`))
      .address;
  }

  async fund(subject: string, amountMinor: bigint): Promise<void> {
    await this.admin('POST', `/wallets/users/${encodeURIComponent(subject)}/fund`, {
      amount_minor: amountMinor.toString(),
    });
  }

  async createEvent(eventId: bigint): Promise<void> {
    await this.admin('POST', '/events', { event_id: eventId.toString(), name: `Chaos ${eventId}` });
  }

  async seedListing(
    eventId: bigint,
    ticketId: bigint,
    sellerSubject: string,
    priceMinor: bigint,
  ): Promise<SeededListing> {
    return this.admin<SeededListing>('POST', '/listings', {
      event_id: eventId.toString(),
      ticket_id: ticketId.toString(),
      seller: { kind: 'user', subject: sellerSubject },
      ask_price_minor: priceMinor.toString(),
    });
  }

  async ticket(eventId: string, ticketId: string): Promise<{ owner: string; listing: unknown }> {
    return this.admin('GET', `/tickets/${eventId}/${ticketId}`);
  }

  async setFaults(rules: unknown[], seed: string): Promise<void> {
    await this.admin('PUT', '/faults', { rules, seed });
  }

  async clearFaults(): Promise<void> {
    await this.admin('DELETE', '/faults');
  }

  /** The sandbox ledger's own list of signed transactions (GET /__sandbox/transactions). */
  async transactions(instruction?: string): Promise<LedgerTransaction[]> {
    const query = instruction ? `?instruction=${encodeURIComponent(instruction)}` : '';
    return (await this.admin<{ items: LedgerTransaction[] }>('GET', `/transactions${query}`)).items;
  }
}
