import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import type { OrderBody as ChaosOrderBody } from '../../bench/chaos/orders-client';
import type { SandboxProcess } from '../../bench/chaos/sandbox-process';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { CheckoutIntegrator } from '../../src/checkout/checkout.integrator';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import { bearer } from './auth-helpers';
import { fundedBuyer, seedListing, type SeededListing, type Wallet } from './market';
import { waitUntil } from './wait';

/** Short intervals, leases and upstream timeouts so checkout tests (faults included) finish quickly. */
export const CHECKOUT_TEST_ENV: Record<string, string> = {
  CHECKOUT_WORKER_INTERVAL_MS: '50',
  CHECKOUT_TRACK_POLL_MS: '50',
  CHECKOUT_RETRY_BASE_DELAY_MS: '20',
  CHECKOUT_RETRY_MAX_DELAY_MS: '200',
  CHECKOUT_LEASE_MS: '3000',
  CHECKOUT_REVALIDATE_TIMEOUT_MS: '3000',
  TX_TRACKER_INTERVAL_MS: '50',
  TX_RESUBMIT_BASE_DELAY_MS: '50',
  TX_RESUBMIT_MAX_DELAY_MS: '200',
  TX_LEASE_MS: '1000',
  RATE_LIMIT_ORDERS_WRITE: '100000',
  UPSTREAM_READ_TIMEOUT_MS: '400',
  UPSTREAM_SIGN_TIMEOUT_MS: '400',
  UPSTREAM_SUBMIT_TIMEOUT_MS: '400',
  UPSTREAM_DEADLINE_MS: '1500',
  UPSTREAM_BACKOFF_BASE_MS: '10',
  UPSTREAM_BACKOFF_MAX_MS: '50',
  UPSTREAM_RETRY_AFTER_CAP_MS: '2000',
  UPSTREAM_BREAKER_THRESHOLD: '1000',
};

export interface OrderBody {
  id: string;
  idempotency_key: string;
  buyer: { subject: string; address: string };
  state: string;
  final: boolean;
  meaning: string;
  attempt: number;
  expected_price: { minor: string; amount: string | null; decimals: number | null };
  current_price: { minor: string; amount: string | null } | null;
  failure: { code: string; reason: string } | null;
  transaction: {
    custodial_transaction_id: string;
    transaction_signature: string;
    upstream_status: string | null;
  } | null;
  previous_attempts: {
    attempt: number;
    upstream_idempotency_key: string;
    custodial_transaction_id: string | null;
  }[];
  steps?: { step: string; state: string; attempt: number; detail: string | null }[];
}

/** A listing of a fresh event and a funded buyer (the buyer's wallet pays, the seller's payout receives). */
export function market(
  sandbox: SandboxHandle,
  n: number | string,
  askPriceMinor = 2_500_000n,
): { listing: SeededListing; buyer: Wallet } {
  const listing = seedListing(sandbox, { seller: `seller-co-${n}`, askPriceMinor });
  const buyer = fundedBuyer(sandbox, `buyer-co-${n}`, 0n);
  return { listing, buyer };
}

/**
 * A listing of a fresh event, a funded buyer, and the listing's live revalidation as checkout makes it: the
 * `accept_offer_v2` batch it would sign for that buyer.
 */
export async function revalidatedMarket(
  app: NestFastifyApplication,
  sandbox: SandboxHandle,
  n: number | string,
): Promise<{ listing: SeededListing; buyer: Wallet; batch: Record<string, unknown> }> {
  const { listing, buyer } = market(sandbox, n);
  const check = await app
    .get(CheckoutIntegrator)
    .revalidate({ ...listing, expectedPriceMinor: listing.askPriceMinor, buyerAddress: buyer.address });
  if (check.kind !== 'ok') throw new Error(`revalidation: ${check.kind}`);
  return { listing, buyer, batch: check.batch };
}

export function orderBody(
  listing: SeededListing,
  buyer: Wallet,
  price = listing.askPriceMinor,
): Record<string, string> {
  return {
    buyer_subject: buyer.subject,
    buyer_address: buyer.address,
    event_id: listing.eventId.toString(),
    ticket_id: listing.ticketId.toString(),
    expected_price_minor: price.toString(),
  };
}

/** POST /v1/orders through Fastify's inject (no sockets: cheap for many concurrent requests). */
export async function postOrder(
  app: NestFastifyApplication,
  clientKey: string,
  idempotencyKey: string | undefined,
  body: unknown,
): Promise<{
  status: number;
  body: OrderBody & { error?: { code: string; details?: { field: string }[] } };
  headers: Record<string, unknown>;
}> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method: 'POST',
      url: '/v1/orders',
      headers: {
        ...bearer(clientKey),
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      payload: JSON.stringify(body),
    });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

export async function getOrder(
  app: NestFastifyApplication,
  clientKey: string,
  path: string,
): Promise<{ status: number; body: OrderBody }> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({ method: 'GET', url: path, headers: bearer(clientKey) });
  return { status: res.statusCode, body: res.json() };
}

/** Polls the order until it is final (bounded), returning it with its audit steps. */
export async function waitFinal(
  app: NestFastifyApplication,
  clientKey: string,
  id: string,
  timeoutMs = 20_000,
): Promise<OrderBody> {
  let last: OrderBody | undefined;
  await waitUntil(
    async () => {
      last = (await getOrder(app, clientKey, `/v1/orders/${id}?steps=true`)).body;
      return (
        last.final &&
        (last.state !== 'confirmed' || Boolean(last.steps?.some((s) => s.step.startsWith('mirror_refresh'))))
      );
    },
    timeoutMs,
    50,
  );
  return last as OrderBody;
}

/** Rows of the mirror's `listings` table for one listing (catalog sync's table, read for assertions only). */
/**
 * Refreshes one event's listings in the mirror and returns once a refresh pass completed. The suite runs
 * with 400 ms upstream timeouts, so on a loaded machine a pass can fail on a slow read; it is retried, at
 * most 5 times, and the last pass's error is thrown if none completed.
 */
export async function refreshMirror(app: NestFastifyApplication, eventId: bigint): Promise<void> {
  let last: { status: string; error: string | null } | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    last = await app.get(CatalogSyncService).refreshEvent(eventId);
    if (last.status === 'completed') return;
  }
  throw new Error(`no refresh pass of event ${eventId} completed; last: ${last?.status} ${last?.error}`);
}

export async function mirrorListing(
  app: NestFastifyApplication,
  eventId: bigint,
  ticketId: bigint,
): Promise<{ removed_at: Date | null } | undefined> {
  const rows = await app
    .get(DataSource)
    .query<{ removed_at: Date | null }[]>(
      `SELECT removed_at FROM listings WHERE event_id = $1 AND ticket_id = $2`,
      [eventId.toString(), ticketId.toString()],
    );
  return rows[0];
}

/** How many confirmed accept_offer_v2 transactions bought this ticket in the sandbox, read from its purchase records. */
export function ownerOf(sandbox: SandboxHandle, eventId: bigint, ticketId: bigint): string | undefined {
  return sandbox.admin.ticket(eventId, ticketId)?.owner;
}

/** Waits (bounded) until the sandbox's ledger shows the listing's ticket owned by `address`; throws if not. */
export function untilOwnedBy(
  sandbox: SandboxHandle,
  listing: { eventId: bigint; ticketId: bigint },
  address: string,
  timeoutMs = 5_000,
): Promise<number> {
  return waitUntil(
    () => Promise.resolve(ownerOf(sandbox, listing.eventId, listing.ticketId) === address),
    timeoutMs,
    20,
  );
}

/** The body of `POST /v1/orders` (the chaos harness's type). */
export type PurchaseRequest = ChaosOrderBody;

/**
 * For tests against a sandbox process: a ticket of the fresh event `eventId` listed at `priceMinor`, and the
 * order body of a fresh buyer funded for it (`tag` names the seller and buyer subjects).
 */
export async function fundedOrderBody(
  sandbox: SandboxProcess,
  eventId: bigint,
  tag: string,
  priceMinor: bigint,
): Promise<PurchaseRequest> {
  await sandbox.createEvent(eventId);
  const listing = await sandbox.seedListing(eventId, 1n, `${tag}-seller-${eventId}`, priceMinor);
  const buyer = `${tag}-buyer-${eventId}`;
  await sandbox.fund(buyer, priceMinor * 2n);
  return {
    buyer_subject: buyer,
    buyer_address: await sandbox.userAddress(buyer),
    event_id: listing.event_id,
    ticket_id: listing.ticket_id,
    expected_price_minor: priceMinor.toString(),
  };
}
