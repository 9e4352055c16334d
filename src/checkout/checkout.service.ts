import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { KeysetCursorCodec } from '../common/keyset-cursor';
import { keysetPage } from '../common/keyset-page';
import { CheckoutConfig } from '../config/checkout.config';
import { requireIdempotencyKey } from '../common/idempotency-key';
import type { PrefetchedRevalidation } from './checkout.context';
import { CheckoutDriver } from './checkout.driver';
import { CheckoutErrors } from './checkout.errors';
import { crashPoint } from './crash-points';
import { CheckoutIntegrator } from './checkout.integrator';
import type { CreateOrderDto } from './dto/create-order.dto';
import type { OrderEntity } from './order.entity';
import { OrderFiguresRepository, type FinalCount, type OpenOrder } from './order-figures.repository';
import { OrderRepository, type CreateResult, type NewOrder } from './order.repository';
import { isFinalState, toOrderResponse, type OrderResponse } from './order.mapper';
import { currentTraceparent } from '../tracing/tracing';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const WAIT_POLL_MS = 50;

export interface CreateOutcome {
  order: OrderResponse;
  replayed: boolean;
}

/**
 * Orders: create (the order and its key committed before anything goes upstream, then driven at once by this
 * replica), read with an optional bounded long-poll, look up by key, list. The state machine is CheckoutDriver;
 * the recovery worker (checkout.worker.ts) resumes what a crash or a deferred step left.
 */
@Injectable()
export class CheckoutService {
  private readonly logger = new Logger(CheckoutService.name);
  private readonly inFlight = new Map<string, Promise<CreateResult>>();

  constructor(
    private readonly driver: CheckoutDriver,
    private readonly repo: OrderRepository,
    private readonly config: CheckoutConfig,
    private readonly integrator: CheckoutIntegrator,
    private readonly cursors: KeysetCursorCodec,
    private readonly figures: OrderFiguresRepository,
  ) {}

  /** Figures of the status page (docs/status.md): open orders by state (not done yet). */
  openByState(): Promise<Record<string, number>> {
    return this.figures.openByState();
  }

  /** The oldest order not final yet (the status page). */
  oldestOpen(): Promise<OpenOrder | null> {
    return this.figures.oldestOpen();
  }

  /** Orders final in [from, to) (epoch ms) by outcome and attempt: every one (the status page). */
  finalCounts(from: number, to: number): Promise<FinalCount[]> {
    return this.figures.finalCounts(from, to);
  }

  /** Times to final (ms) of orders final in [from, to), a bounded sample in final_at order (the status page). */
  finalDurations(from: number, to: number): Promise<number[]> {
    return this.figures.finalDurations(from, to);
  }

  async create(
    clientId: string,
    key: string,
    dto: CreateOrderDto,
    requestId?: string,
  ): Promise<CreateOutcome> {
    requireIdempotencyKey(key);
    const input = {
      clientId,
      idempotencyKey: key,
      fingerprint: fingerprintOf(dto),
      requestId: requestId ?? null,
      buyerSubject: dto.buyer_subject,
      buyerAddress: dto.buyer_address,
      eventId: BigInt(dto.event_id),
      ticketId: BigInt(dto.ticket_id),
      expectedPriceMinor: BigInt(dto.expected_price_minor),
    };
    const c = this.config;
    // Concurrent requests with one key on this replica share one database round (they would otherwise each
    // hold a pooled connection while queueing on the buyer's lock); later ones see the stored order first.
    const flightKey = `${clientId}\n${key}`;
    let flight = this.inFlight.get(flightKey);
    const leader = flight === undefined;
    // The leader sends the insert, then starts the live revalidation read alongside it: a read has no effect
    // upstream, so it need not wait for the order row (signing does). The insert is the longer of the two (the
    // lock, the limits, the row, its audit and outbox rows, the commit) and signing waits for it, so it goes on
    // the wire first; building the read's request before it delayed the insert's connection ~0.7 ms
    // (docs/BENCHMARKS.md session 16). Used only when the insert creates the order; a replay or a refused
    // limit drops it (docs/checkout.md: a replay costs one read). No insert sent (no connection): no read.
    let revalidation: Promise<PrefetchedRevalidation> | undefined;
    if (!flight) {
      flight = this.createOrGet(input, () => {
        revalidation = settle(
          this.integrator.revalidate({
            eventId: input.eventId,
            ticketId: input.ticketId,
            expectedPriceMinor: input.expectedPriceMinor,
            buyerAddress: input.buyerAddress,
            requestId: input.requestId,
          }),
        );
      });
      this.inFlight.set(flightKey, flight);
      void flight.finally(() => this.inFlight.delete(flightKey)).catch(() => undefined);
    }
    const shared = await flight;
    const result =
      !leader && shared.kind === 'inserted' ? { kind: 'existing' as const, order: shared.order } : shared;
    if (result.kind === 'open_limit')
      throw CheckoutErrors.openOrdersLimit(c.CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER);
    if (result.kind === 'event_limit')
      throw CheckoutErrors.eventLimit(
        c.CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT,
        c.CHECKOUT_PURCHASE_WINDOW_SECONDS,
      );
    if (result.kind === 'existing') {
      if (result.order.fingerprint !== input.fingerprint) throw CheckoutErrors.keyReused();
      return { order: await this.view(result.order), replayed: true };
    }
    this.logger.log(
      { orderId: result.order.id, requestId, step: 'created', state: 'created', attempt: 1 },
      'checkout step',
    );
    crashPoint('after_commit_created');
    // Handed to the driver in process at once (this replica holds the lease): no wait for a worker poll; the
    // worker takes over if this process dies.
    void this.driver.drive(result.order, revalidation);
    // The drive's first upstream call (signing, once the read is in) is built over microtasks: the 202 waits one
    // turn of the event loop, so that call is on the wire before the answer is built and written (the answer
    // went first, ~0.3 ms, and its write woke the client on the other core; docs/BENCHMARKS.md session 16).
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Tracing on: a drive resumed later (retry, crash, another replica) links its new trace to this request's.
    // Alongside the drive, and never the request's failure: a lost write only loses the link.
    const traceparent = currentTraceparent();
    if (traceparent) void this.repo.saveTraceparent(result.order.id, traceparent).catch(() => undefined);
    return { order: await this.view(result.order), replayed: false };
  }

  /** One transaction: the buyer's lock, then the key lookup, the limit counts and the insert in one statement. */
  private createOrGet(input: NewOrder, onSent: () => void): Promise<CreateResult> {
    const c = this.config;
    crashPoint('before_commit_created');
    return this.repo.createOrGet(
      input,
      this.driver.instanceId,
      c.CHECKOUT_LEASE_MS,
      {
        maxOpen: c.CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER,
        maxPerEvent: c.CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT,
        windowSeconds: c.CHECKOUT_PURCHASE_WINDOW_SECONDS,
      },
      onSent,
    );
  }

  /** The client's order (another client's → 404); with `waitMs`, returns early once its state changes. */
  async get(clientId: string, id: string, waitMs = 0, withSteps = false): Promise<OrderResponse> {
    let order = await this.owned(clientId, id);
    const initial = `${order.state}:${order.attempt}`;
    const deadline = Date.now() + Math.min(waitMs, this.config.CHECKOUT_MAX_WAIT_MS);
    while (
      !isFinalState(order.state) &&
      `${order.state}:${order.attempt}` === initial &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(WAIT_POLL_MS, Math.max(1, deadline - Date.now()))),
      );
      order = await this.owned(clientId, id);
    }
    return this.view(order, withSteps);
  }

  /** The client's orders, newest first; `idempotencyKey` narrows it to the order made with that key (0 or 1). */
  async list(
    clientId: string,
    limit: number,
    cursor: string | undefined,
    idempotencyKey: string | undefined,
  ): Promise<{ items: OrderResponse[]; next_cursor: string | null }> {
    if (idempotencyKey !== undefined) {
      const found = await this.repo.findByKey(clientId, idempotencyKey);
      return { items: found ? [await this.view(found)] : [], next_cursor: null };
    }
    // Bound to the client too: another client's cursor is the same 400 as a forged one.
    const binding = { sort: 'created_desc', filters: { client: clientId } };
    let after: string | null = null;
    if (cursor !== undefined) {
      const [id] = this.cursors.decode(cursor, binding);
      if (typeof id !== 'string' || !UUID.test(id)) throw CheckoutErrors.badCursor();
      after = id;
    }
    const rows = await this.repo.page(clientId, limit, after);
    const page = keysetPage(rows, limit, (o) => [o.id], this.cursors, binding);
    const decimals = await this.integrator.decimals();
    return { items: page.items.map((o) => toOrderResponse(o, decimals)), next_cursor: page.next_cursor };
  }

  /** Parses `?wait=` (`5s`, `500ms`, `5` = seconds); 400 naming `wait` when malformed or too long. */
  parseWait(wait: string | undefined): number {
    if (wait === undefined || wait === '') return 0;
    const match = /^(\d{1,6})(ms|s)?$/.exec(wait);
    const ms = match ? Number(match[1]) * (match[2] === 'ms' ? 1 : 1000) : NaN;
    if (!Number.isFinite(ms) || ms > this.config.CHECKOUT_MAX_WAIT_MS)
      throw CheckoutErrors.badWait(this.config.CHECKOUT_MAX_WAIT_MS);
    return ms;
  }

  private async owned(clientId: string, id: string): Promise<OrderEntity> {
    if (!UUID.test(id)) throw CheckoutErrors.notFound();
    const order = await this.repo.findOwned(clientId, id);
    if (!order) throw CheckoutErrors.notFound();
    return order;
  }

  private async view(order: OrderEntity, withSteps = false): Promise<OrderResponse> {
    const decimals = order.stablecoinDecimals ?? (await this.integrator.decimals());
    return toOrderResponse(order, decimals, withSteps ? await this.repo.steps(order.id) : undefined);
  }
}

/** A promise's outcome as a value (never rejects: a dropped prefetch is no unhandled rejection). */
function settle<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/** What makes two order requests "the same": buyer, listing and expected price, by value. */
export function fingerprintOf(dto: CreateOrderDto): string {
  const canonical = JSON.stringify([
    dto.buyer_subject,
    dto.buyer_address,
    BigInt(dto.event_id).toString(),
    BigInt(dto.ticket_id).toString(),
    BigInt(dto.expected_price_minor).toString(),
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
