import { num } from '../common/worst-case';
import { syncPassWorstCase } from '../catalog-sync/catalog-sync.retries';
import { orderWorstCase } from '../checkout/checkout.retries';
import { MAX_STEPS_PER_DRIVE } from '../checkout/checkout.driver';
import { MAX_REFRESH_TRIES } from '../checkout/order.settlement';
import { MAX_POLLS_PER_DRIVE } from '../checkout/order.tracker';
import { mirrorRefreshWorstCase } from '../listings/listings.retries';
import { ledgerWorstCase } from '../transactions/transactions.retries';
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from '../webhooks/delivery.schedule';
import { webhookDeliveryWorstCase } from '../webhooks/webhooks.retries';
import { boundText, code, human, type Page, table } from './markdown';
import { sandboxItems, type RetriesConfig } from './retries.bundle';

/** The worst-case sections of docs/RETRIES.md: per order, ledger transaction, sync pass, webhook delivery. */

export function renderOrderCase(page: Page, config: RetriesConfig): void {
  const { checkout: c, upstream: u } = config;
  const order = orderWorstCase(config);
  page.para('## Worst case per order');
  page.para(
    `From \`POST /v1/orders\` to a final state, absent a crash; ${c.CHECKOUT_MAX_ATTEMPTS} attempts`,
    `(${code('CHECKOUT_MAX_ATTEMPTS')}), each: revalidate → sign and first submission → track → (expired) lookup.`,
  );
  page.para(
    table(
      ['what', 'worst case'],
      [
        ['time, POST to final', boundText(order.time, 'ms')],
        ['revalidation time per attempt', boundText(order.revalidationTimePerAttempt, 'ms')],
        ['revalidation walks per attempt', boundText(order.revalidationWalksPerAttempt, 'count')],
        ['revalidation reads (calls)', boundText(order.calls.revalidationReads, 'count')],
        ['revalidation reads (HTTP attempts)', boundText(order.revalidationHttpAttempts, 'count')],
        ['signing calls', boundText(order.calls.signing, 'count')],
        ['submissions / status re-sends', boundText(order.calls.submissions, 'count')],
        ['purchase-status lookups', boundText(order.calls.purchaseStatus, 'count')],
        ['mirror refresh passes', boundText(order.calls.mirrorRefreshPasses, 'count')],
      ],
    ),
  );
  page.para(
    `- Worst delay of a failed step: ${num(order.worstRetryDelayMs)} ms (the capped Retry-After; without one the`,
    `  ceiling ${num(order.backoff.maxMs)} ms), then up to one worker interval (${num(order.claimLatencyMs)} ms) until a`,
    '  worker claims the order.',
    `- One revalidation try lasts at most ${num(order.revalidationTryMs)} ms: the live walk is cut at`,
    `  ${code('CHECKOUT_REVALIDATE_TIMEOUT_MS')}, but a resumed attempt reads the protocol config without that signal`,
    '  (a whole upstream call).',
    `- Fastest pace of the unbounded loops, per order: signing ${order.perMinute.signing}/min,`,
    `  status re-sends ${order.perMinute.submissions}/min (plus the ledger tracker's own looks), purchase-status`,
    `  lookups ${order.perMinute.purchaseStatus}/min; each call up to ${u.UPSTREAM_MAX_ATTEMPTS} HTTP attempts.`,
    `- In-process tracking hands the order back every ${num(order.trackHandBackMs)} ms`,
    `  (max(${code('CHECKOUT_TRACK_POLL_MS')}, ${code('CHECKOUT_LEASE_MS')} / 2)), due at once; ${code('MAX_STEPS_PER_DRIVE')}`,
    `  (${MAX_STEPS_PER_DRIVE}) and ${code('MAX_POLLS_PER_DRIVE')} (${num(MAX_POLLS_PER_DRIVE)}) end a drive, never an order.`,
    "- The ledger's give-up does not end an order's tracking: each in-process re-send re-opens a stopped tracking.",
  );
}

export function renderLedgerCase(page: Page, config: RetriesConfig): void {
  const { transactions: t } = config;
  const ledger = ledgerWorstCase(config);
  const refresh = mirrorRefreshWorstCase(config);
  page.para('## Worst case per ledger transaction');
  page.para(
    `The tracker claims due rows every ${code('TX_TRACKER_INTERVAL_MS')} (${num(t.TX_TRACKER_INTERVAL_MS)} ms), so one`,
    "row's tries are at least that far apart. It gives up on a submitted transaction at its first look after",
    `signing + ${code('TX_BLOCKHASH_LIFETIME_MS')} + ${code('TX_GIVE_UP_GRACE_MS')} = ${num(ledger.giveUpAfterSignMs)} ms, after one more send.`,
  );
  page.para(
    table(
      ['what', 'worst case'],
      [
        ['unknown signing: repeats (calls)', boundText(ledger.signing.calls, 'count')],
        ['unknown signing: HTTP attempts', boundText(ledger.signing.httpAttempts, 'count')],
        ['unknown signing: time', boundText(ledger.signing.time, 'ms')],
        ['submissions until final or give-up', boundText(ledger.submissions.calls, 'count')],
        ['submissions: HTTP attempts', boundText(ledger.submissions.httpAttempts, 'count')],
        ['signing to give-up, no Retry-After', boundText(ledger.submissions.time, 'ms')],
        ['signing to give-up, with Retry-After', boundText(ledger.submissions.timeWithRetryAfter, 'ms')],
        ['after-final mirror refresh: runs', boundText(refresh.runs, 'count')],
        ['after-final mirror refresh: waits', boundText(refresh.waits, 'ms')],
        ['after-final handler without a limit: runs', boundText(ledger.afterFinal.unlimitedRuns, 'count')],
      ],
    ),
  );
  page.para(
    `- An unknown signing is repeated after a delay drawn from 0..ceiling (+ one tracker interval); each repeat`,
    `  raises \`sign_attempts\`, so the ceiling doubles up to ${num(ledger.signing.delayCeilingMs)} ms. The call count above`,
    '  is the worst case of full jitter: every draw 0.',
    `- ${code('TX_SIGN_RESOLVE_WINDOW_MS')} is counted from the row's creation; an older unknown signing is no longer`,
    "  claimed by the tracker (a caller's retry with the same key still resumes it).",
  );
}

export function renderSyncCase(page: Page, config: RetriesConfig): void {
  const { sync: s } = config;
  page.para('## Worst case per sync pass');
  const passes = (['events', 'listings'] as const).map((resource) =>
    syncPassWorstCase(config, resource, sandboxItems(config, resource)),
  );
  page.para(
    `A pass walks every page (${code('SYNC_PAGE_SIZE')} ${num(s.SYNC_PAGE_SIZE)} items each) until \`next_cursor\` is null; each`,
    'page is one read call (retried inside the client); a page that still fails fails the pass, and the next scheduled',
    'pass starts again from page 1. Calls per pass = pages; HTTP attempts = pages × (1 + retries). Example: the',
    `sandbox's default catalog (${code('SANDBOX_EVENTS')} ${num(config.sandbox.SANDBOX_EVENTS)}, ${code('SANDBOX_LISTINGS')} ${num(config.sandbox.SANDBOX_LISTINGS)}).`,
  );
  page.para(
    table(
      ['pass', 'page calls', 'HTTP attempts', 'upstream time', 'next pass within'],
      passes.map((p) => [
        `${p.resource} (${num(p.items)} items)`,
        boundText(p.calls, 'count'),
        boundText(p.httpAttempts, 'count'),
        boundText(p.time, 'ms'),
        boundText(p.gapMs, 'ms'),
      ]),
    ),
  );
  const cap = passes[0];
  if (cap)
    page.para(
      '- **A pass has no time limit of its own: it is unbounded while its lease renews** (every',
      `  ${num(cap.leaseRenewMs)} ms, a third of ${code('SYNC_LEASE_TTL_MS')}). The only cap is the walk's page limit:`,
      `  ${boundText(cap.capTime, 'ms')}; ${boundText(cap.capHttpAttempts, 'count')} HTTP attempts. Database writes`,
      '  come on top.',
      `- A holder that stops renewing loses the pass after at most ${code('SYNC_LEASE_TTL_MS')} (${num(s.SYNC_LEASE_TTL_MS)} ms): another`,
      '  replica takes the lease over and the abandoned pass is marked failed.',
      `- After a confirmed order the event's listings are refreshed by one such pass, at most ${MAX_REFRESH_TRIES} times.`,
    );
}

export function renderWebhookCase(page: Page, config: RetriesConfig): void {
  page.para('## Worst case per webhook delivery');
  const hook = webhookDeliveryWorstCase(config);
  const w = config.webhooks;
  page.para(
    `A delivery (one event to one endpoint) is tried at most ${hook.tries} times: at once, then after each delay of the`,
    `schedule (${RETRY_SCHEDULE_MS.map((ms) => human(ms)).join(', ')}, each ± ${RETRY_JITTER * 100} %), then it is`,
    `\`failed\` (src/webhooks/delivery.schedule.ts). Each try is one POST bounded by ${code('WEBHOOKS_DELIVERY_TIMEOUT_MS')}`,
    `(${num(w.WEBHOOKS_DELIVERY_TIMEOUT_MS)} ms); anything but a 2xx, redirects included, is a failed try.`,
  );
  page.para(
    table(
      ['what', 'worst case'],
      [
        ['tries per delivery', `**${hook.tries}** (a manual retry adds one)`],
        ['append to `failed`', boundText(hook.time, 'ms')],
      ],
    ),
  );
  page.para(
    `- A sender killed mid-send holds the delivery until ${code('WEBHOOKS_LEASE_MS')} (${num(w.WEBHOOKS_LEASE_MS)} ms) runs`,
    '  out; another replica then sends it again with the same `webhook-id` (the crashed try counts as one).',
    `- An endpoint whose tries all failed for ${code('WEBHOOKS_DISABLE_AFTER_HOURS')} (${w.WEBHOOKS_DISABLE_AFTER_HOURS} h) is`,
    '  disabled at its next failure; its pending deliveries then fail without a send.',
  );
}
