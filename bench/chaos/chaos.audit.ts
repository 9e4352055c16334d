import type { PlannedOrder } from './market';
import type { OrderView } from './orders-client';
import type { LedgerTransaction } from './sandbox-process';

export interface OrderRecord {
  planned: PlannedOrder;
  accepted: OrderView | null;
  refusal: string | null;
  acceptedAt: number;
  finalAfterMs: number | null;
}

export interface AuditFigures {
  seed: string;
  orders: number;
  accepted: number;
  confirmed: number;
  rejected: number;
  failed: number;
  landedWithError: number;
  /** Final states with their failure codes, e.g. `rejected/PRICE_CHANGED: 30` (wrong-price orders marked). */
  outcomes: Record<string, number>;
  contendedListings: number;
  /** Contended listings the ledger shows bought (once, or the duplicates count it). */
  contendedSold: number;
  // Breaches: every one must be 0.
  duplicatePurchases: number;
  lostOrders: number;
  completeWithoutConfirmed: number;
  notFinalInTime: number;
  notAccepted: number;
  ledgerWithoutOrder: number;
  falseRejections: number;
  contendedMultipleWinners: number;
  contendedWrongOutcomes: number;
}

/** What the loser of a contended listing may end as: the ticket went to another buyer, or the service gave up. */
const LOSER_OUTCOMES = new Set([
  'rejected/LISTING_GONE',
  'landed_with_error/LANDED_WITH_ERROR',
  'failed/SIGNING_REJECTED',
  'failed/UPSTREAM_UNAVAILABLE',
  'failed/ATTEMPTS_EXHAUSTED',
]);
/** Rejections that claim something about the listing the ledger can check. */
const LISTING_CLAIMS = new Set(['LISTING_GONE', 'PRICE_CHANGED']);

function listingKey(eventId: string, ticketId: string): string {
  return `${eventId}/${ticketId}`;
}

function outcomeOf(view: OrderView): string {
  return `${view.state}${view.failure ? `/${view.failure.code}` : ''}`;
}

/**
 * The audit, against the sandbox ledger (the truth) rather than the service's own records (docs/chaos.md):
 * - duplicate purchases: confirmed accept_offer_v2 transactions beyond the first per listing, and per
 *   upstream idempotency key;
 * - lost orders: accepted (202) but unknown to every replica (404) or never answering;
 * - complete without `confirmed`: the order says confirmed but its ledger transaction is not a confirmed
 *   purchase of that listing by that buyer;
 * - ledger without order: the ledger confirmed a purchase of the listing by the order's buyer and the order
 *   does not say confirmed (or by a buyer no order of the run has), or a wrong-price order had anything signed;
 * - not final in time: final_at missing, or later than `finalWithinMs` after the last fault;
 * - false rejections: rejected LISTING_GONE or PRICE_CHANGED at the listing's own price while no confirmed
 *   purchase of it had landed (`landedAtMs`) by the order's `final_at` — the listing was live at that price
 *   the whole time the order was open (prices never change during a run);
 * - contended listings: more than one confirmed order for one listing, or a loser whose outcome is not one
 *   of LOSER_OUTCOMES.
 */
export function audit(input: {
  seed: string;
  records: readonly OrderRecord[];
  views: ReadonlyMap<string, OrderView | null | undefined>;
  ledger: readonly LedgerTransaction[];
  lastFaultAt: number;
  finalWithinMs: number;
  note: (line: string) => void;
}): AuditFigures {
  const { records, ledger, note } = input;
  const byListing = new Map<string, LedgerTransaction[]>();
  const confirmedByKey = new Map<string, number>();
  const byId = new Map<string, LedgerTransaction>();
  for (const tx of ledger) {
    byId.set(tx.custodialTransactionId, tx);
    for (const item of tx.items) {
      const k = listingKey(item.event_id, item.ticket_id);
      byListing.set(k, [...(byListing.get(k) ?? []), tx]);
    }
    if (tx.state === 'confirmed')
      confirmedByKey.set(tx.idempotencyKey, (confirmedByKey.get(tx.idempotencyKey) ?? 0) + 1);
  }
  const f: AuditFigures = {
    seed: input.seed,
    orders: records.length,
    accepted: 0,
    confirmed: 0,
    rejected: 0,
    failed: 0,
    landedWithError: 0,
    outcomes: {},
    contendedListings: 0,
    contendedSold: 0,
    duplicatePurchases: 0,
    lostOrders: 0,
    completeWithoutConfirmed: 0,
    notFinalInTime: 0,
    notAccepted: 0,
    ledgerWithoutOrder: 0,
    falseRejections: 0,
    contendedMultipleWinners: 0,
    contendedWrongOutcomes: 0,
  };
  for (const count of confirmedByKey.values()) f.duplicatePurchases += Math.max(0, count - 1);

  const byListingRecords = new Map<string, OrderRecord[]>();
  for (const r of records) {
    const k = listingKey(r.planned.body.event_id, r.planned.body.ticket_id);
    byListingRecords.set(k, [...(byListingRecords.get(k) ?? []), r]);
  }
  for (const [k, group] of byListingRecords) {
    const confirmedTxs = (byListing.get(k) ?? []).filter((t) => t.state === 'confirmed');
    if (confirmedTxs.length > 1) {
      f.duplicatePurchases += confirmedTxs.length - 1;
      note(`listing ${k}: ${confirmedTxs.length} confirmed purchases`);
    }
    const buyers = new Set(group.map((r) => r.planned.body.buyer_subject));
    for (const tx of confirmedTxs.filter((t) => !buyers.has(t.subject))) {
      f.ledgerWithoutOrder++;
      note(`listing ${k}: bought by ${tx.subject}, for whom the run placed no order`);
    }
    for (const r of group) auditOrder(r, k, confirmedTxs);
    if (group.some((r) => r.planned.contended)) auditContended(k, group, confirmedTxs.length > 0);
  }
  return f;

  function auditOrder(record: OrderRecord, k: string, confirmedTxs: LedgerTransaction[]): void {
    const { planned } = record;
    const mine = confirmedTxs.filter((t) => t.subject === planned.body.buyer_subject);
    if (!record.accepted) {
      f.notAccepted++;
      if (mine.length > 0) {
        f.ledgerWithoutOrder++;
        note(`listing ${k}: purchased, but its order ${planned.key} was never accepted`);
      }
      return;
    }
    f.accepted++;
    const view = input.views.get(record.accepted.id);
    if (!view) {
      f.lostOrders++;
      note(`order ${record.accepted.id} (${planned.key}): ${view === null ? '404' : 'no answer'}`);
      return;
    }
    const outcome = `${outcomeOf(view)}${planned.wrongPrice ? ' (wrong price sent)' : ''}`;
    f.outcomes[outcome] = (f.outcomes[outcome] ?? 0) + 1;
    if (view.state === 'confirmed') f.confirmed++;
    else if (view.state === 'rejected') f.rejected++;
    else if (view.state === 'failed') f.failed++;
    else if (view.state === 'landed_with_error') f.landedWithError++;

    const finalAt = view.final_at ? Date.parse(view.final_at) : null;
    if (finalAt === null || finalAt > input.lastFaultAt + input.finalWithinMs) {
      f.notFinalInTime++;
      note(`order ${view.id}: ${view.state}, final_at ${view.final_at ?? 'none'}`);
    }
    if (view.state === 'confirmed') {
      const tx = byId.get(view.transaction?.custodial_transaction_id ?? '');
      const ok =
        tx !== undefined &&
        tx.state === 'confirmed' &&
        tx.subject === planned.body.buyer_subject &&
        tx.items.some((i) => listingKey(i.event_id, i.ticket_id) === k);
      if (!ok) {
        f.completeWithoutConfirmed++;
        note(`order ${view.id}: confirmed, ledger transaction ${tx ? tx.state : 'missing'}`);
      }
    } else if (mine.length > 0) {
      f.ledgerWithoutOrder++;
      note(`order ${view.id}: ${view.state}, but the ledger confirmed its buyer's purchase of ${k}`);
    }
    const signed = (byListing.get(k) ?? []).filter((t) => t.subject === planned.body.buyer_subject);
    if (planned.wrongPrice && (view.state !== 'rejected' || signed.length > 0)) {
      f.ledgerWithoutOrder++;
      note(`order ${view.id}: wrong price, state ${view.state}, ${signed.length} signed transactions`);
    }
    if (
      view.state === 'rejected' &&
      LISTING_CLAIMS.has(view.failure?.code ?? '') &&
      BigInt(planned.body.expected_price_minor) === BigInt(planned.listingPriceMinor)
    ) {
      const soldAt = confirmedTxs
        .map((t) => t.landedAtMs)
        .filter((at): at is number => at !== null)
        .reduce((a, b) => Math.min(a, b), Infinity);
      if (finalAt !== null && finalAt < soldAt) {
        f.falseRejections++;
        note(
          `order ${view.id} (${planned.key}): ${outcomeOf(view)} at ${view.final_at}, but ${k} was live at ` +
            `${planned.listingPriceMinor} until ${Number.isFinite(soldAt) ? new Date(soldAt).toISOString() : 'the end'}`,
        );
      }
    }
  }

  function auditContended(k: string, group: OrderRecord[], sold: boolean): void {
    f.contendedListings++;
    if (sold) f.contendedSold++;
    const finals = group.flatMap((r) => {
      const view = r.accepted ? input.views.get(r.accepted.id) : undefined;
      return view?.final ? [view] : [];
    });
    const winners = finals.filter((v) => v.state === 'confirmed');
    if (winners.length > 1) {
      f.contendedMultipleWinners++;
      note(`listing ${k}: ${winners.length} confirmed orders (${winners.map((v) => v.id).join(', ')})`);
    }
    for (const loser of finals.filter((v) => v.state !== 'confirmed')) {
      if (LOSER_OUTCOMES.has(outcomeOf(loser))) continue;
      f.contendedWrongOutcomes++;
      note(`order ${loser.id}: contended ${k}, ended ${outcomeOf(loser)}`);
    }
  }
}

/** Every breach with its count; an empty list is a pass. */
export function breachesOf(
  r: AuditFigures & { idempotencyMismatches: number; http500: number; httpOther5xx: number },
): string[] {
  const checks: [string, number][] = [
    ['HTTP 500s', r.http500],
    ['5xx other than 503 with Retry-After', r.httpOther5xx],
    ['false rejections', r.falseRejections],
    ['duplicate purchases', r.duplicatePurchases],
    ['contended listings with more than one confirmed order', r.contendedMultipleWinners],
    ['contended losers with a wrong outcome', r.contendedWrongOutcomes],
    ['lost orders', r.lostOrders],
    ['orders complete without a confirmed ledger transaction', r.completeWithoutConfirmed],
    ['orders not final within the bound after the last fault', r.notFinalInTime],
    ['orders never accepted', r.notAccepted],
    ['idempotent repeats that did not replay the same order', r.idempotencyMismatches],
    ['ledger purchases the order does not show', r.ledgerWithoutOrder],
  ];
  return checks.filter(([, n]) => n !== 0).map(([what, n]) => `${what}: ${n}`);
}
