import type { ListingsConfig } from '../config/listings.config';
import type { TransactionsConfig } from '../config/transactions.config';
import { constantSetting, describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, type Bound } from '../common/worst-case';
import { backoffCeiling } from '../durable-work/backoff.policy';
import { txBackoffSettings } from '../transactions/transactions.backoff';
import { FRESH_READ_MAX_WALKS } from './live-listing.reader';
import { REFRESH_EVENT_MAX_ATTEMPTS } from './mirror-refresh.handler';
import { TICKET_TYPE_CACHE_MS } from './selling.integrator';

/**
 * The read API's and selling's retry-like settings (docs/RETRIES.md), and the after-final mirror refresh this
 * module registers with the ledger tracker (listed with the ledger, which runs it).
 */
export function listingsRetries(l: ListingsConfig): RetryDescription[] {
  return [
    ...describedSettings(l, 'service', 'listings.config.ts'),
    constantSetting('service', 'FRESH_READ_MAX_WALKS', FRESH_READ_MAX_WALKS, {
      unit: 'count',
      bounds:
        'walks of one `?fresh=true` read while null identifiers leave it undecided (then 502), within its timeout',
      where: 'src/listings/live-listing.reader.ts `FRESH_READ_MAX_WALKS`',
    }),
    constantSetting('service', 'TICKET_TYPE_CACHE_MS', TICKET_TYPE_CACHE_MS, {
      unit: 'ms',
      bounds:
        "selling's reuse of an event's `ticket_type_config` from one upcoming-events walk (its integrator " +
        'addresses come from the one protocol-config cache: SYNC_PROTOCOL_CONFIG_REFRESH_MS)',
      where: 'src/listings/selling.integrator.ts `TICKET_TYPE_CACHE_MS`',
    }),
    constantSetting('transactions', 'REFRESH_EVENT_MAX_ATTEMPTS', REFRESH_EVENT_MAX_ATTEMPTS, {
      unit: 'count',
      bounds:
        'runs of the after-final mirror refresh of a confirmed list / cancel / buy (selling or the signing routes), then given up',
      where: 'src/listings/mirror-refresh.handler.ts `REFRESH_EVENT_MAX_ATTEMPTS`',
    }),
  ];
}

export interface MirrorRefreshWorstCase {
  /** REFRESH_EVENT_MAX_ATTEMPTS runs, then given up. */
  runs: Bound;
  /** Its waits between runs, first run to give-up (the passes' own time comes on top). */
  waits: Bound;
}

/** The after-final mirror refresh (`listings.refresh-event`), run by the ledger tracker with the ledger backoff. */
export function mirrorRefreshWorstCase(config: { transactions: TransactionsConfig }): MirrorRefreshWorstCase {
  const t = config.transactions;
  const backoff = txBackoffSettings(t);
  // After run k fails the next waits up to the ceiling after k − 1 failures (delayFor), then one tracker pass.
  const ceilings = Array.from({ length: REFRESH_EVENT_MAX_ATTEMPTS - 1 }, (_, k) =>
    backoffCeiling(backoff, k),
  );
  const waits =
    ceilings.reduce((a, b) => a + b, 0) + (REFRESH_EVENT_MAX_ATTEMPTS - 1) * t.TX_TRACKER_INTERVAL_MS;
  return {
    runs: finite(
      REFRESH_EVENT_MAX_ATTEMPTS,
      `REFRESH_EVENT_MAX_ATTEMPTS = ${REFRESH_EVENT_MAX_ATTEMPTS}, then given up (history \`on_final\` "gave up after N tries")`,
    ),
    waits: finite(
      waits,
      `${ceilings.map(num).join(' + ')} + ${REFRESH_EVENT_MAX_ATTEMPTS - 1} × ${num(t.TX_TRACKER_INTERVAL_MS)} = ${num(waits)} ms`,
    ),
  };
}
