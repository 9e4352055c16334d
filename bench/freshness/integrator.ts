import { sleep } from '../chaos/processes';
import { SANDBOX_API_KEY, type SandboxProcess } from '../chaos/sandbox-process';

const REQUEST_TIMEOUT_MS = 10_000;
/**
 * The sandbox ledger is polled this often for a submitted transaction's landing (admin route, no upstream
 * budget), the first time one landing delay after the submission: ~2 polls a change, not 10 (at 20 changes/s
 * and 100 in flight, 100-ms polls were ~1,000 requests/s on the sandbox).
 */
const LANDING_POLL_MS = 250;
const FINAL = new Set(['confirmed', 'landed_with_error', 'expired']);

/** A listing as the sandbox admin created it (the indexer's listing item: payout, permit version, royalties…). */
export type ListingItem = Record<string, unknown> & { event_id: string; ticket_id: string };

interface Signed {
  custodialTransactionId: string;
  signedTransaction: string;
}

/**
 * Another integrator on the same upstream (issue 30's "rest of the market" besides service B): signs with its
 * users' custodial wallets and submits through the upstream contract itself (§4.1, §4.3, full-access key), then
 * waits for the landing on the sandbox ledger. No database and no service in between, so one change costs two
 * upstream requests and a few ledger polls: on a loaded 2-core machine B alone made 5.5–9 changes/s of 20.
 */
export class DirectIntegrator {
  private protocol: { authority: string; identity: string } | null = null;

  constructor(
    private readonly sandbox: SandboxProcess,
    /** The sandbox's SANDBOX_LANDING_DELAY_MS: no landing is looked for sooner. */
    private readonly landingDelayMs: number,
  ) {}

  private async post<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const res = await fetch(`${this.sandbox.url}${path}`, {
      method: 'POST',
      headers: {
        'x-api-key': SANDBOX_API_KEY,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  /** The integrator-level addresses of accept_offer_v2, from the protocol config (read once). */
  private async integrator(): Promise<{ authority: string; identity: string }> {
    if (this.protocol) return this.protocol;
    const res = await fetch(`${this.sandbox.url}/indexer/protocol-config`, {
      headers: { 'x-api-key': SANDBOX_API_KEY },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const raw = (await res.json()) as Record<string, unknown>;
    const authority = raw.integrator_authority;
    const identity = raw.integrator_identity;
    if (typeof authority !== 'string' || typeof identity !== 'string')
      throw new Error('protocol config without integrator_authority / integrator_identity');
    this.protocol = { authority, identity };
    return this.protocol;
  }

  /** Signs `batch` with `subject`'s custodial wallet, submits it and waits (bounded) for it to land. */
  private async signSubmitLand(
    subject: string,
    batch: unknown,
    idempotencyKey: string,
    deadlineMs: number,
  ): Promise<string> {
    const signed = await this.post<Signed>(
      `/wallets/users/${encodeURIComponent(subject)}/signatures`,
      batch,
      idempotencyKey,
    );
    const submitted = await this.post<{ status: string | null }>('/transactions/submissions', {
      signedTransaction: signed.signedTransaction,
    });
    let state = submitted.status ?? 'processing';
    for (let poll = 0; !FINAL.has(state) && Date.now() < deadlineMs; poll++) {
      await sleep(poll === 0 ? this.landingDelayMs + 50 : LANDING_POLL_MS);
      const view = await this.sandbox
        .admin<{ state: string }>('GET', `/transactions/${signed.custodialTransactionId}`)
        .catch(() => null);
      if (view) state = view.state;
    }
    return state;
  }

  /** A purchase of `listing` by the buyer (its custodial wallet signs accept_offer_v2); the landed state. */
  async buy(
    listing: ListingItem,
    buyer: { subject: string; address: string },
    idempotencyKey: string,
    deadlineMs: number,
  ): Promise<string> {
    const { authority, identity } = await this.integrator();
    const text = (name: string): string => {
      const value = listing[name];
      if (typeof value !== 'string') throw new Error(`listing item without ${name}`);
      return value;
    };
    const royalties = listing.royalty_destinations;
    const params = {
      event_id: listing.event_id,
      ticket_id: listing.ticket_id,
      permit_version: text('permit_version'),
      buyer: buyer.address,
      integrator_authority: authority,
      seller_payout: text('seller_payout'),
      royalty_destinations: Array.isArray(royalties) ? royalties.map(String) : [],
      ticket_type_config: typeof listing.ticket_type_config === 'string' ? listing.ticket_type_config : null,
      integrator_identity: identity,
      stablecoin_mint: text('stablecoin_mint'),
    };
    return this.signSubmitLand(
      buyer.subject,
      { platformInstructions: { instruction: 'accept_offer_v2', params: [params] } },
      idempotencyKey,
      deadlineMs,
    );
  }

  /** A seller cancels its own listing (its custodial wallet signs cancel_listing_v1); the landed state. */
  async cancel(
    eventId: string,
    ticketId: string,
    seller: { subject: string; address: string },
    idempotencyKey: string,
    deadlineMs: number,
  ): Promise<string> {
    return this.signSubmitLand(
      seller.subject,
      {
        platformInstructions: {
          instruction: 'cancel_listing_v1',
          params: [{ event_id: eventId, ticket_id: ticketId, canceller: seller.address }],
        },
      },
      idempotencyKey,
      deadlineMs,
    );
  }
}
