import { mapLimit } from '../chaos/market';
import { OrdersClient } from '../chaos/orders-client';
import { sleep } from '../chaos/processes';
import type { SandboxProcess } from '../chaos/sandbox-process';
import type { ServiceReplica } from '../chaos/service-replica';
import { DirectIntegrator, type ListingItem } from './integrator';
import type { MarketChange } from './score';

const SELLERS = 20;
const BUYERS = 50;
/** Listings per busy event stay within these bounds: below, the next change adds; above, it removes. */
const MIN_LISTINGS = 100;
const MAX_LISTINGS = 200;
/** Share of each kind of change (the rest of the market): buys, cancels, reprices, the rest new listings. */
const SHARE = { buy: 0.35, cancel: 0.15, reprice: 0.15 };
/**
 * A change not confirmed within this long counts as failed here (the listing is left out of later changes); the
 * change log is the sandbox ledger's, so one that lands later is still logged.
 */
const CHANGE_DEADLINE_MS = 60_000;
const TRACK_POLL_MS = 200;
/**
 * Purchases and cancels service B drives at once, at most; the others go through the direct integrator (another
 * integrator on the same upstream). B is a whole service on the shared machine: with more in flight its orders and
 * cancels queued (5.5–9 changes/s of 20 in session 14), and its load would be charged to A's figures.
 */
const B_MAX_IN_FLIGHT = 8;

type Kind = 'buy' | 'cancel' | 'reprice' | 'add';

interface Listed {
  priceMinor: bigint;
  seller: number;
  /** The listing item as the sandbox admin created it (what a direct purchase signs for). */
  item?: ListingItem;
}

/** The busy events as the market knows them: what it listed and has not removed yet. */
interface BusyEvent {
  eventId: string;
  listed: Map<string, Listed>;
  /** Every listing ever put on each ticket (time of the admin's 201, price), in time order. */
  history: Map<string, { atMs: number; priceMinor: string }[]>;
  /** Tickets with a change in flight: no second change picks them. */
  busy: Set<string>;
  nextTicket: bigint;
}

export interface MarketTally {
  /** Changes that really happened (a reprice counts once), by kind. */
  done: Record<Kind, number>;
  failed: Record<Kind, number>;
  /** Ticks skipped because the in-flight bound was reached. */
  skipped: number;
  /** Purchases and cancels (a reprice's included) started through service B, and through the direct integrator. */
  route: { b: number; direct: number };
  /** Failure reasons (at most two of each kind). */
  reasons: string[];
}

/**
 * The rest of the market on the busy events: purchases (`POST /v1/orders`) and cancels (selling's cancel)
 * through service B and the upstream, new listings (and the relist half of a reprice) through the sandbox
 * admin. Changes are logged once they really happened: new listings at the admin's 201, purchases and cancels
 * from the sandbox ledger at the end (confirmed, dated at their landing).
 */
export class FreshMarket {
  readonly tally: MarketTally = {
    done: { buy: 0, cancel: 0, reprice: 0, add: 0 },
    failed: { buy: 0, cancel: 0, reprice: 0, add: 0 },
    skipped: 0,
    route: { b: 0, direct: 0 },
    reasons: [],
  };
  /** Listings added during the run (dated); removals come from the sandbox ledger in changes(). */
  private readonly added: MarketChange[] = [];
  private readonly events: BusyEvent[] = [];
  private readonly sellers: { subject: string; address: string }[] = [];
  private readonly buyers: { subject: string; address: string }[] = [];
  private readonly orders: OrdersClient;
  private readonly direct: DirectIntegrator;
  /** Purchases and cancels B drives now (bounded by B_MAX_IN_FLIGHT). */
  private bInFlight = 0;
  private seq = 0;

  constructor(
    private readonly sandbox: SandboxProcess,
    private readonly b: ServiceReplica,
    private readonly bApiKey: string,
    private readonly rng: () => number,
    private readonly tag: string,
    landingDelayMs: number,
  ) {
    this.orders = new OrdersClient([b], bApiKey);
    this.direct = new DirectIntegrator(sandbox, landingDelayMs);
  }

  /** Creates `events` busy events from `firstEventId` with 100–200 listings each (admin API). */
  async seed(firstEventId: bigint, events: number): Promise<string[]> {
    for (let s = 0; s < SELLERS; s++) {
      const subject = `fresh-seller-${s}`;
      this.sellers.push({ subject, address: await this.sandbox.userAddress(subject) });
    }
    for (let b = 0; b < BUYERS; b++) {
      const subject = `fresh-buyer-${b}`;
      this.buyers.push({ subject, address: await this.sandbox.userAddress(subject) });
    }
    const drafts: { event: BusyEvent; ticketId: bigint; listed: Listed }[] = [];
    for (let e = 0; e < events; e++) {
      const eventId = firstEventId + BigInt(e);
      await this.sandbox.createEvent(eventId);
      const event: BusyEvent = {
        eventId: eventId.toString(),
        listed: new Map(),
        history: new Map(),
        busy: new Set(),
        nextTicket: 1n,
      };
      const count = MIN_LISTINGS + Math.floor(this.rng() * (MAX_LISTINGS - MIN_LISTINGS + 1));
      for (let t = 0; t < count; t++)
        drafts.push({
          event,
          ticketId: event.nextTicket++,
          listed: { priceMinor: this.price(), seller: Math.floor(this.rng() * SELLERS) },
        });
      this.events.push(event);
    }
    await mapLimit(drafts, 8, async ({ event, ticketId, listed }) => {
      const item = await this.seedOne(event, ticketId, listed);
      event.listed.set(ticketId.toString(), { ...listed, item });
      event.history.set(ticketId.toString(), [{ atMs: 0, priceMinor: listed.priceMinor.toString() }]);
    });
    return this.events.map((e) => e.eventId);
  }

  listingCount(): number {
    return this.events.reduce((n, e) => n + e.listed.size, 0);
  }

  /**
   * `ratePerSecond` changes a second for `seconds` seconds: one tick every 1/rate s starts a change. A tick that
   * finds `maxInFlight` changes in flight waits for one to finish (the next ticks then catch up at once); ticks
   * not started within the `seconds` are dropped and counted as skipped. Waits for those in flight (each bounded
   * by CHANGE_DEADLINE_MS).
   */
  async run(ratePerSecond: number, seconds: number, maxInFlight: number): Promise<void> {
    const ticks = Math.round(ratePerSecond * seconds);
    const t0 = Date.now();
    const end = t0 + seconds * 1000;
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; i < ticks; i++) {
      const due = t0 + (i * 1000) / ratePerSecond;
      if (due > Date.now()) await sleep(due - Date.now());
      // Bounded: each change in flight ends within CHANGE_DEADLINE_MS.
      while (inFlight.size >= maxInFlight && Date.now() < end) await Promise.race(inFlight);
      if (inFlight.size >= maxInFlight || Date.now() >= end + 1000) {
        this.tally.skipped += ticks - i;
        break;
      }
      const change = this.change().finally(() => inFlight.delete(change));
      inFlight.add(change);
    }
    await Promise.all(inFlight);
  }

  /**
   * Every change that really happened: the listings added, and every purchase (`accept_offer_v2`) and cancel
   * (`cancel_listing_v1`) the sandbox ledger confirmed on a busy event — whoever's client gave up waiting —
   * dated at its landing (`landedAtMs`), at the price of the ticket's listing live at that instant.
   */
  async changes(): Promise<MarketChange[]> {
    const byId = new Map(this.events.map((e) => [e.eventId, e]));
    const removals: MarketChange[] = [];
    for (const tx of await this.sandbox.transactions()) {
      if (tx.state !== 'confirmed' || tx.landedAtMs === null) continue;
      if (tx.instruction !== 'accept_offer_v2' && tx.instruction !== 'cancel_listing_v1') continue;
      for (const item of tx.items) {
        const history = byId.get(item.event_id)?.history.get(item.ticket_id) ?? [];
        const live = history.filter((h) => h.atMs <= (tx.landedAtMs ?? 0)).at(-1);
        if (!live) continue;
        removals.push({
          effect: 'removed',
          eventId: item.event_id,
          ticketId: item.ticket_id,
          priceMinor: live.priceMinor,
          atMs: tx.landedAtMs,
        });
      }
    }
    return [...this.added, ...removals];
  }

  /** Purchases and cancels the sandbox ledger confirmed on busy events (what really happened). */
  async confirmedRemovals(): Promise<{ buy: number; cancel: number }> {
    const busy = new Set(this.events.map((e) => e.eventId));
    const counts = { buy: 0, cancel: 0 };
    for (const tx of await this.sandbox.transactions()) {
      if (tx.state !== 'confirmed' || !tx.items.some((i) => busy.has(i.event_id))) continue;
      if (tx.instruction === 'accept_offer_v2') counts.buy++;
      if (tx.instruction === 'cancel_listing_v1') counts.cancel++;
    }
    return counts;
  }

  private price(): bigint {
    // 1.000–99.999 units (6 decimals), whole thousandths.
    return BigInt(1_000 + Math.floor(this.rng() * 99_000)) * 1000n;
  }

  private async change(): Promise<void> {
    const event = this.events[Math.floor(this.rng() * this.events.length)];
    const draw = this.rng();
    let kind: Kind =
      draw < SHARE.buy
        ? 'buy'
        : draw < SHARE.buy + SHARE.cancel
          ? 'cancel'
          : draw < SHARE.buy + SHARE.cancel + SHARE.reprice
            ? 'reprice'
            : 'add';
    if (event.listed.size - event.busy.size <= MIN_LISTINGS && kind !== 'reprice') kind = 'add';
    else if (event.listed.size >= MAX_LISTINGS && kind === 'add') kind = 'buy';
    try {
      if (kind === 'add') await this.add(event);
      else {
        const free = [...event.listed.keys()].filter((t) => !event.busy.has(t));
        if (free.length === 0) throw new Error('no listing free for a change');
        const ticketId = free[Math.floor(this.rng() * free.length)];
        const listed = event.listed.get(ticketId);
        event.busy.add(ticketId);
        let viaB = this.bInFlight < B_MAX_IN_FLIGHT;
        this.tally.route[viaB ? 'b' : 'direct']++;
        if (viaB) this.bInFlight++;
        try {
          if (kind === 'buy') await (viaB ? this.buy(event, ticketId) : this.buyDirect(event, ticketId));
          else await (viaB ? this.cancel(event, ticketId) : this.cancelDirect(event, ticketId));
          if (viaB) {
            this.bInFlight--;
            viaB = false;
          }
          if (kind === 'reprice' && listed) await this.relist(event, ticketId, listed);
        } catch (error) {
          // Outcome unknown (it may still land): no later change picks this ticket; the ledger tells at the end.
          event.listed.delete(ticketId);
          throw error;
        } finally {
          if (viaB) this.bInFlight--;
          event.busy.delete(ticketId);
        }
      }
      this.tally.done[kind]++;
    } catch (error) {
      this.tally.failed[kind]++;
      if (this.tally.reasons.filter((r) => r.startsWith(`${kind}:`)).length < 2)
        this.tally.reasons.push(`${kind}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async add(event: BusyEvent): Promise<void> {
    const ticketId = event.nextTicket++;
    const listed = { priceMinor: this.price(), seller: Math.floor(this.rng() * SELLERS) };
    const item = await this.seedOne(event, ticketId, listed);
    this.logAdded(event, ticketId.toString(), { ...listed, item });
  }

  /** The relist half of a reprice: the same seller lists the same ticket again at another price. */
  private async relist(event: BusyEvent, ticketId: string, previous: Listed): Promise<void> {
    const { seller } = previous;
    let priceMinor = this.price();
    if (priceMinor === previous.priceMinor) priceMinor += 1000n;
    const item = await this.seedOne(event, BigInt(ticketId), { priceMinor, seller });
    this.logAdded(event, ticketId, { priceMinor, seller, item });
  }

  /** One listing put on the ledger by the sandbox admin; its listing item. */
  private async seedOne(event: BusyEvent, ticketId: bigint, listed: Listed): Promise<ListingItem> {
    return (await this.sandbox.seedListing(
      BigInt(event.eventId),
      ticketId,
      this.sellers[listed.seller].subject,
      listed.priceMinor,
    )) as unknown as ListingItem;
  }

  /** A purchase by another integrator on the upstream (DirectIntegrator); counted only when confirmed. */
  private async buyDirect(event: BusyEvent, ticketId: string): Promise<void> {
    const item = event.listed.get(ticketId)?.item;
    if (!item) throw new Error('listing item unknown');
    const buyer = this.buyers[Math.floor(this.rng() * this.buyers.length)];
    const state = await this.direct.buy(
      item,
      buyer,
      `fresh-${this.tag}-direct-${++this.seq}`,
      Date.now() + CHANGE_DEADLINE_MS,
    );
    if (state !== 'confirmed') throw new Error(`direct purchase ${state}`);
    event.listed.delete(ticketId);
  }

  /** A seller's cancel through another integrator on the upstream (DirectIntegrator). */
  private async cancelDirect(event: BusyEvent, ticketId: string): Promise<void> {
    const listed = event.listed.get(ticketId);
    if (!listed) throw new Error('listing unknown');
    const state = await this.direct.cancel(
      event.eventId,
      ticketId,
      this.sellers[listed.seller],
      `fresh-${this.tag}-direct-${++this.seq}`,
      Date.now() + CHANGE_DEADLINE_MS,
    );
    if (state !== 'confirmed') throw new Error(`direct cancel ${state}`);
    event.listed.delete(ticketId);
  }

  private logAdded(event: BusyEvent, ticketId: string, listed: Listed): void {
    const atMs = Date.now();
    const priceMinor = listed.priceMinor.toString();
    event.listed.set(ticketId, listed);
    const history = event.history.get(ticketId) ?? [];
    history.push({ atMs, priceMinor });
    event.history.set(ticketId, history);
    this.added.push({ effect: 'added', eventId: event.eventId, ticketId, priceMinor, atMs });
  }

  /** A purchase through B: POST /v1/orders, then B's order until final; counted only when confirmed. */
  private async buy(event: BusyEvent, ticketId: string): Promise<void> {
    const listed = event.listed.get(ticketId);
    if (!listed) throw new Error('listing unknown');
    const buyer = this.buyers[Math.floor(this.rng() * this.buyers.length)];
    const posted = await this.orders.post(
      `fresh-${this.tag}-${++this.seq}`,
      {
        buyer_subject: buyer.subject,
        buyer_address: buyer.address,
        event_id: event.eventId,
        ticket_id: ticketId,
        expected_price_minor: listed.priceMinor.toString(),
      },
      0,
      CHANGE_DEADLINE_MS,
    );
    if (posted.status !== 202 || !posted.order)
      throw new Error(`order refused ${posted.status}: ${posted.refusal ?? ''}`);
    const final = await this.orders.waitFinal(posted.order.id, 0, CHANGE_DEADLINE_MS);
    if (final?.state !== 'confirmed')
      throw new Error(`order ${final?.state ?? 'not final'} ${final?.failure?.code ?? ''}`);
    event.listed.delete(ticketId);
  }

  /** A cancel through B's selling route (the seller's custodial wallet), then B's record until final. */
  private async cancel(event: BusyEvent, ticketId: string): Promise<void> {
    const listed = event.listed.get(ticketId);
    if (!listed) throw new Error('listing unknown');
    const seller = this.sellers[listed.seller];
    const headers = { authorization: `Bearer ${this.bApiKey}` };
    const idempotencyKey = `fresh-${this.tag}-${++this.seq}`;
    const deadline = Date.now() + CHANGE_DEADLINE_MS;
    let res: Response | null = null;
    let text = '';
    // A 503 (B's DATABASE_BUSY on a loaded machine), a 429 or no answer: the same key again, within the deadline.
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      res = await fetch(`${this.b.url}/v1/listings/${event.eventId}/${ticketId}/cancel`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ seller_subject: seller.subject, seller_address: seller.address }),
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      text = res === null ? '' : await res.text().catch(() => '');
      if (res !== null && ![409, 429, 502, 503, 504].includes(res.status)) break;
      await sleep(Math.min(2_000, 200 * 2 ** Math.min(attempt, 4)));
    }
    if (res?.status !== 202)
      throw new Error(`cancel refused ${res?.status ?? 'no answer'}: ${text.slice(0, 200)}`);
    let record = JSON.parse(text) as {
      custodialTransactionId: string | null;
      status: string | null;
      final: boolean;
    };
    while (!record.final && record.custodialTransactionId !== null && Date.now() < deadline) {
      await sleep(TRACK_POLL_MS);
      // A poll that fails or times out (a loaded machine) is only retried, within the deadline.
      const poll = await fetch(`${this.b.url}/v1/transactions/${record.custodialTransactionId}`, {
        headers,
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      const body = poll === null ? '' : await poll.text().catch(() => '');
      if (poll?.status === 200) record = JSON.parse(body) as typeof record;
    }
    if (record.status !== 'confirmed') throw new Error(`cancel ${record.status ?? 'not final'}`);
    event.listed.delete(ticketId);
  }
}
