import { num } from '../common/worst-case';
import { orderWorstCase } from '../checkout/checkout.retries';
import { MAX_REFRESH_TRIES } from '../checkout/order.settlement';
import { DATABASE_BUSY_RETRY_AFTER_S } from '../database/pool-gate';
import { REFRESH_EVENT_MAX_ATTEMPTS } from '../listings/mirror-refresh.handler';
import { ledgerWorstCase } from '../transactions/transactions.retries';
import { RATE_LIMIT_RECOVERY_INTERVAL_MS, RATE_LIMIT_RECOVERY_STEP } from '../upstream/http/rate-limiter';
import { MIN_ATTEMPT_MS } from '../upstream/http/retry-loop';
import { DEFAULT_RETRY_AFTER_SECONDS } from '../upstream/upstream-error.mapper';
import { DEFAULT_MAX_PAGES } from '../upstream/wire/pagination';
import { code, type Page } from './markdown';
import type { RetriesConfig } from './retries.bundle';

/** The rule sections of docs/RETRIES.md: Retry-After, what is never retried, the unbounded loops. */
export function renderRules(page: Page, config: RetriesConfig): void {
  const { upstream: u } = config;
  const order = orderWorstCase(config);
  const ledger = ledgerWorstCase(config);
  page.para('## Retry-After');
  page.para(
    `- **Inside an upstream call**: a 429's Retry-After (seconds or HTTP-date) is waited exactly, never less, when it`,
    `  is at most ${code('UPSTREAM_RETRY_AFTER_CAP_MS')} (${num(u.UPSTREAM_RETRY_AFTER_CAP_MS)} ms) and fits before the deadline; a longer one`,
    '  ends the call `RATE_LIMITED` carrying the wait. Every 429 halves the rate (floor',
    `  ${code('UPSTREAM_RATE_LIMIT_MIN_RPS')}) and pauses every call for min(Retry-After, cap), on every replica (the others`,
    `  at their next heartbeat); each quiet ${num(RATE_LIMIT_RECOVERY_INTERVAL_MS)} ms adds back ${RATE_LIMIT_RECOVERY_STEP * 100}% of ${code('UPSTREAM_RATE_LIMIT_RPS')}.`,
    `- **Orders**: a failed step waits max(jitter, min(Retry-After, ${num(order.backoff.retryAfterCapMs)} ms)); a 429`,
    '  without a Retry-After adds nothing to the jitter.',
    `- **Ledger transactions**: a failed re-send or signing waits max(jitter, min(Retry-After, ${num(ledger.backoff.retryAfterCapMs)} ms)).`,
    '- **Catalog sync**: none at pass level (the client honours it inside each page call).',
    `- **Our own answers**: 503 \`DATABASE_BUSY\` with Retry-After ${DATABASE_BUSY_RETRY_AFTER_S} s; a signing in flight under the same key 409 with`,
    `  the seconds left on its lease (at most ${code('TX_LEASE_MS')}); 429 of our rate limits, upstream \`RATE_LIMITED\``,
    `  passed on with the upstream's Retry-After, else ${DEFAULT_RETRY_AFTER_SECONDS} s.`,
  );

  page.para('## What is never retried');
  page.para(
    '- **By the upstream client**: any status but 500/502/503/504 and 429 (401, 403, 404, 409, other 4xx, 501, 505…);',
    "  an open circuit; a full concurrency queue; a response body it refuses (BAD_RESPONSE); the caller's",
    `  cancellation; a retry that cannot start at least ${num(MIN_ATTEMPT_MS)} ms before the deadline. Signing and submission are`,
    '  retried only as the same request: the same idempotency key, the same signed bytes.',
    '- **Orders**: a definite refusal of signing (4xx) fails the order `SIGNING_REJECTED` (409 "key holds another',
    '  request" goes to the purchase-status lookup instead); a refused submission (4xx) goes to the lookup, never',
    '  re-sent; `gone` / `price_changed` / `restricted` revalidations reject the order once the purchase status by the',
    "  attempt's key says nothing was bought (a purchase by it decides the order instead); a failing revalidation after",
    `  ${code('CHECKOUT_REVALIDATE_GIVE_UP_MS')} fails it; a new attempt only after the lookup says \`expired\` or`,
    `  "no purchase", at most ${code('CHECKOUT_MAX_ATTEMPTS')} attempts; the mirror refresh after ${MAX_REFRESH_TRIES} tries.`,
    '- **Ledger**: a definite signing refusal (`sign_rejected`, replayed to later retries); a refused submission',
    '  (`tracking_stopped: rejected`); a transaction past its give-up time (`gave_up`); an unknown signing older',
    `  than ${code('TX_SIGN_RESOLVE_WINDOW_MS')} (by the tracker); the after-final mirror refresh after`,
    `  ${REFRESH_EVENT_MAX_ATTEMPTS} runs (\`REFRESH_EVENT_MAX_ATTEMPTS\`; the next scheduled listings pass catches the mirror up).`,
    '- **Webhooks**: a delivery after its last scheduled try (`failed`; a manual retry sends it once more); a send the',
    '  SSRF guard refuses counts as a failed try; redirects are never followed; a `Retry-After` of a receiver is',
    '  not honoured (the schedule is fixed).',
    '- **Catalog sync**: a failed page within its pass (the next scheduled pass starts over); a walk past',
    `  ${num(DEFAULT_MAX_PAGES)} pages or with a repeated cursor (BAD_RESPONSE).`,
  );

  page.para('## Unbounded loops');
  page.para(
    'Loops the code does not bound in time. Each is on the money path where the outcome is unknown: only the',
    "upstream's answer may end it, because giving up could leave a purchase that landed marked failed. They retry",
    'with the same key or the same bytes (harmless), under the capped backoff above, and they are watched:',
    '`checkout_oldest_open_order_age_seconds` and `durable_work_oldest_due_age_seconds{queue}` grow while one runs.',
    '',
    '- Checkout signing (`OrderAttempt.sign`, `signAndSubmit`): a transient signing failure is retried with the same',
    '  key and no give-up (a definite 4xx fails the order).',
    '- Checkout tracking (`OrderTracker.track`): the order is re-sent and handed back every half lease for as long as',
    "  the upstream answers a non-final status or a transient error; the in-process send re-opens the ledger's",
    '  stopped tracking.',
    '- Checkout purchase-status lookup (`OrderSettlement.lookup`): retried while it fails or says pending / unknown.',
    "- Ledger after-final handler registered without a try limit (checkout's order wake-up, `TransactionsTrackerWork`):",
    '  retried while it throws, its backoff growing with `on_final_attempts`; its reconciliation of an order closed',
    '  while its purchase landed must not be dropped. A handler a replica has not registered is never claimed there.',
    '- Catalog sync pass: no time limit; it runs while its lease renews (`HeldLease`), capped only',
    `  by ${num(DEFAULT_MAX_PAGES)} pages (\`DEFAULT_MAX_PAGES\`).`,
  );
}
