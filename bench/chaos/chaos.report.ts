import type { AuditFigures } from './chaos.audit';
import type { DisruptionLog } from './disruptions';
import type { FiveXxSample } from './orders-client';
import type { WebhookFigures } from './webhooks-check';

export interface ChaosReport extends AuditFigures {
  disruptions: DisruptionLog;
  replicaStarts: number;
  /** Lease of an order and of a ledger transaction in the replicas (the freeze outlasts both). */
  leaseMs: number;
  idempotentRepeats: number;
  idempotencyMismatches: number;
  faultsInjected: number;
  /** Listing pages served with null-id items (the `null_ids` fault). */
  nullIdPages: number;
  http: {
    requests: number;
    networkErrors: number;
    /** Must be 0. */
    status500: number;
    /** Allowed: answered while the database was down or busy, retried after Retry-After. */
    unavailableWithRetryAfter: number;
    /** Must be 0: 502, 504, a 503 without Retry-After. */
    other5xx: number;
    byStatus: Record<string, number>;
    /** Up to 10 of the 5xx that count, each with the replica's log lines for its request id. */
    samples: (FiveXxSample & { log: string[] })[];
  };
  /** Replica log messages counted over the run (chaos.run.ts REPLICA_LOG_EVENTS). */
  replicaLog: Record<string, number>;
  /** The first lines of those logged as errors (step crashes, failed work items, unhandled errors). */
  replicaErrors: string[];
  /** Those error lines counted by event and message (numbers blanked). */
  replicaErrorKinds: Record<string, number>;
  durationMs: number;
  finalP50Ms: number;
  finalP99Ms: number;
  lastFaultToAllFinalMs: number | null;
  finalWithinMs: number;
  /** Issue 24: what the run's webhook receiver got, against the database and the feed. */
  webhooks: WebhookFigures;
  breaches: string[];
  /** Up to 30 lines naming the orders behind the breaches. */
  details: string[];
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

/** The printed summary (docs/chaos.md explains each line). */
export function formatChaosReport(r: ChaosReport): string {
  const d = r.disruptions;
  const w = r.webhooks;
  const pg =
    d.pgRestarts > 0
      ? `${d.pgRestarts} PostgreSQL restart (immediate; ${d.pgOutagesMs.map(seconds).join(', ')} without it)`
      : `PostgreSQL restarts: ${d.pgRestartsSkipped > 0 ? `${d.pgRestartsSkipped} skipped (DATABASE_URL)` : 'none'}`;
  const lines = [
    `chaos seed=${r.seed}: ${r.orders} orders, ${(r.durationMs / 1000).toFixed(1)} s, ${r.replicaStarts} replica starts`,
    `  disruptions: ${d.kills} kill -9 of one replica, ${d.doubleKills} kill -9 of both at once, ${pg}, ` +
      `${d.freezes} SIGSTOP of a replica for ${d.frozenMs.map(seconds).join(', ') || '-'} (leases ${seconds(r.leaseMs)})`,
    `  upstream faults: ${r.faultsInjected} injected, ${r.nullIdPages} listing pages with null-id items`,
    `  accepted ${r.accepted}: confirmed ${r.confirmed}, rejected ${r.rejected}, failed ${r.failed}, landed_with_error ${r.landedWithError}; ${r.idempotentRepeats} idempotent repeats`,
    `  contended: ${r.contendedListings} listings with several buyers at once, ${r.contendedSold} sold`,
    `  time to final while running: p50 ${r.finalP50Ms} ms, p99 ${r.finalP99Ms} ms; last fault → all final: ${r.lastFaultToAllFinalMs === null ? 'NOT REACHED' : `${r.lastFaultToAllFinalMs} ms`}`,
    `  outcomes: ${counts(r.outcomes)}`,
    `  HTTP: ${r.http.requests} requests (${counts(r.http.byStatus)}), ${r.http.networkErrors} network errors or timeouts; ` +
      `${r.http.unavailableWithRetryAfter} 503 with Retry-After (retried)`,
    `  replica logs: ${counts(r.replicaLog)}`,
    ...(Object.keys(r.replicaErrorKinds).length > 0
      ? [`  replica errors by message: ${counts(r.replicaErrorKinds)}`]
      : []),
    `  webhooks: ${w.requests} requests, ${w.deliveries} acknowledged (${w.events} events, ${w.duplicateDeliveries} duplicate deliveries by webhook-id), ` +
      `${w.injectedFailures} first tries answered 500, ${w.slowAnswers} slowly; ` +
      `deliveries drained ${w.drainMs === null ? `NOT (${w.pendingAtEnd} pending, next try ${w.nextPendingTryAt ?? '-'})` : `in ${w.drainMs} ms`}, ${w.failedDeliveries} failed; ` +
      `feed: ${w.feedOrderEvents} order events, ${w.feedCatalogEvents} catalog events`,
    `  catalog events: ${w.catalogEvents} listing.* events on ${w.listingsWithEvents} listings of the run's events; ` +
      `bought and removed from the mirror ${w.soldRemoved}: announced sold ${w.soldAnnounced}, another reason ${w.soldOtherReason}; ` +
      `bought, still served ${w.confirmedStillServed}; removed, not bought here ${w.removedUnsold}; ` +
      `${w.backfills} backfill markers (PostgreSQL restarts), ${w.settledByBackfill} bought listings settled by one`,
    `  HTTP 500s seen:                      ${r.http.status500}`,
    `  other 5xx (not 503 + Retry-After):   ${r.http.other5xx}`,
    `  false rejections:                    ${r.falseRejections}`,
    `  duplicate purchases:                 ${r.duplicatePurchases}`,
    `  contended, more than one confirmed:  ${r.contendedMultipleWinners}`,
    `  contended losers, wrong outcome:     ${r.contendedWrongOutcomes}`,
    `  lost orders:                         ${r.lostOrders}`,
    `  complete without confirmed:          ${r.completeWithoutConfirmed}`,
    `  not final within ${Math.round(r.finalWithinMs / 1000)} s of last fault: ${r.notFinalInTime}`,
    `  never accepted:                      ${r.notAccepted}`,
    `  idempotency mismatches:              ${r.idempotencyMismatches}`,
    `  ledger purchases the order misses:   ${r.ledgerWithoutOrder}`,
    `  final orders announced:              ${w.announcedFinals} of ${w.finalOrders}`,
    `  finals without their webhook event:  ${w.missingFinals}`,
    `  events naming a state not reached:   ${w.wrongStateEvents}`,
    `  two finals, never reopened:          ${w.conflictingFinals}`,
    `  bad signatures:                      ${w.badSignatures}`,
    `  received, not in the feed:           ${w.receivedNotInFeed}`,
    `  feed order/catalog events never received: ${w.feedNotReceived}`,
    `  catalog events not following on:     ${w.catalogIncoherent}`,
    `  catalog's last event ≠ mirror:       ${w.catalogMirrorMismatch}`,
    `  duplicate deliveries (allowed):      ${w.duplicateDeliveries}`,
    `  feed items out of order or repeated: ${w.feedOutOfOrder}`,
    r.breaches.length === 0 ? 'PASS: no breach' : `FAIL: ${r.breaches.join('; ')}`,
    ...r.details.map((line) => `  - ${line}`),
    ...r.http.samples.flatMap((s) => [
      `  - ${s.status} from ${s.replica} to ${s.request} (x-request-id ${s.requestId}) at ${new Date(s.at).toISOString()}: ${s.body}`,
      ...s.log.map((line) => `      ${line}`),
    ]),
    ...(r.replicaErrors.length > 0 ? ['  replica errors logged (first lines):'] : []),
    ...r.replicaErrors.map((line) => `  - ${line}`),
  ];
  return lines.join('\n');
}
