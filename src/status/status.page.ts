import { escapeHtml as e, linePlot, shortNumber } from './status.plot';
import type { StatusReport } from './status.report';

/** 95 → "1m 35s"; 7300 → "2h 1m"; null → "—". */
export function age(seconds: number | null): string {
  if (seconds === null) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d`;
}

const time = (iso: string | null): string =>
  iso === null ? '—' : `<time datetime="${e(iso)}">${e(iso.slice(11, 19))}</time>`;

function table(head: readonly string[], rows: readonly (readonly string[])[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${e(empty)}</p>`;
  return (
    `<div class="table"><table><thead><tr>${head.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('') +
    `</tbody></table></div>`
  );
}

/** Counts by name as a list (narrow enough for a phone, unlike a table). */
function counts(record: Record<string, number>, empty: string): string {
  const entries = Object.entries(record);
  if (entries.length === 0) return `<p class="empty">${e(empty)}</p>`;
  return `<ul class="counts">${entries.map(([k, v]) => `<li><span>${e(k)}</span> <b>${shortNumber(v)}</b></li>`).join('')}</ul>`;
}

/** Label–value pairs (a definition list laid out in two columns). */
function facts(pairs: readonly (readonly [string, string])[]): string {
  return `<dl class="facts">${pairs.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function syncPanel(sync: StatusReport['sync']): string {
  const resources = sync.resources.map((r) => {
    const pass = r.last_pass;
    const outcome = pass
      ? `<span class="badge ${e(pass.status)}">${e(pass.status)}</span>` +
        (pass.failure_kind ? ` <span class="badge kind">${e(pass.failure_kind)}</span>` : '') +
        ` ${time(pass.finished_at ?? pass.started_at)}` +
        (pass.items_per_second === null ? '' : ` · ${shortNumber(pass.items_per_second)} items/s`)
      : 'none yet';
    return (
      `<div class="resource"><h3>${e(r.resource)}</h3>` +
      facts([
        ['last pass', outcome],
        ['mirror age', age(r.mirror_age_seconds)],
        ['lag', age(r.lag_seconds)],
        [
          'next pass',
          r.next_pass_due_at === null ? (sync.enabled ? 'running' : '—') : time(r.next_pass_due_at),
        ],
      ]) +
      (pass?.error ? `<p class="error">${e(pass.error)}</p>` : '') +
      `</div>`
    );
  });
  return (
    `<section class="panel" data-panel="sync"><h2>Catalog sync${sync.enabled ? '' : ' <small>(off on this replica)</small>'}</h2>` +
    `<div class="cols">${resources.join('')}</div>` +
    linePlot('Items/s of the passes, 24 h', sync.items_per_second, 'per pass') +
    `</section>`
  );
}

function ordersPanel(orders: StatusReport['orders']): string {
  const oldest = orders.oldest_open;
  return (
    `<section class="panel" data-panel="orders"><h2>Orders</h2>` +
    `<div class="cols"><div><h3>By state now (not done)</h3>${counts(orders.open_by_state, 'none in flight')}</div>` +
    `<div><h3>Final, 24 h</h3>${counts(orders.final_24h, 'none final')}</div>` +
    `<div><h3>Attempts per order, 24 h</h3>${counts(orders.attempts_24h, 'none final')}</div></div>` +
    `<p>Oldest non-final: ${
      oldest
        ? `<code>${e(oldest.id)}</code> ${e(oldest.state)}, ${age(oldest.age_seconds)} old, attempt ${oldest.attempt}`
        : 'none'
    }</p>` +
    linePlot('Final orders per minute', orders.final_per_minute, 'by outcome') +
    linePlot('Time to final', orders.time_to_final_ms, 'ms') +
    `</section>`
  );
}

function upstreamPanel(upstream: StatusReport['upstream'], minutes: number): string {
  const key = upstream.key_check;
  return (
    `<section class="panel" data-panel="upstream"><h2>Upstream</h2>` +
    `<p>Key check: <span class="badge ${key.ok ? 'completed' : 'failed'}">${key.ok ? 'ok' : e(key.code ?? 'failed')}</span> ` +
    `${e(key.environment)}, checked ${time(key.checked_at)}${key.reason ? ` — ${e(key.reason)}` : ''}</p>` +
    `<p>Request rate: <b>${upstream.request_rate_per_second}</b>/s (last full minute, every replica)</p>` +
    `<h3>By operation, last ${minutes} min (every replica)</h3>` +
    table(
      ['operation', 'requests', 'errors', '429s'],
      upstream.by_operation.map((o) => [
        e(o.operation),
        shortNumber(o.requests),
        shortNumber(o.errors),
        shortNumber(o.throttled),
      ]),
      'no request in the window',
    ) +
    linePlot('Upstream requests per minute', upstream.requests_per_minute, 'by operation') +
    linePlot('Upstream errors and 429s per minute', upstream.errors_per_minute) +
    `</section>`
  );
}

/** Share 0..1 → "97.2 %"; null → "—". */
const percent = (share: number | null): string =>
  share === null ? '—' : `${Math.round(share * 1000) / 10} %`;

function accuracyPanel(a: StatusReport['catalog_accuracy'], minutes: number): string {
  return (
    `<section class="panel" data-panel="accuracy"><h2>Catalog accuracy</h2>` +
    facts([
      [`buyable, last ${minutes} min (every replica)`, `<b>${percent(a.accuracy_window)}</b>`],
      ['samples, stale', `${shortNumber(a.sampled_window)}, ${shortNumber(a.stale_window)}`],
      [
        'this replica',
        a.sampling
          ? `${percent(a.accuracy_now)} of its last ${a.window_samples} samples · one every ${shortNumber(a.sample_interval_ms / 1000)} s`
          : 'not sampling (MIRROR_ACCURACY_SAMPLE_INTERVAL_MS=0)',
      ],
    ]) +
    linePlot('Served listings still buyable at the served price', a.accuracy_per_minute, '% per minute') +
    linePlot('Accuracy samples per minute', a.samples_per_minute) +
    (a.staleness_seconds.length > 0
      ? linePlot('Age of served data, mean per minute', a.staleness_seconds, 's, by tier')
      : `<p class="empty">No served-data age recorded (mirror_staleness_seconds).</p>`) +
    `</section>`
  );
}

function webhooksPanel(webhooks: StatusReport['webhooks']): string {
  return (
    `<section class="panel" data-panel="webhooks"><h2>Webhooks</h2>` +
    `<p>Undelivered: <b>${webhooks.undelivered}</b> · given up, 24 h: <b>${webhooks.failed_24h}</b></p>` +
    table(
      ['endpoint', 'undelivered', 'retrying', 'oldest', 'given up 24 h'],
      webhooks.endpoints.map((w) => [
        `<code>${e(w.endpoint_id)}</code>`,
        String(w.undelivered),
        String(w.retrying),
        age(w.oldest_undelivered_age_seconds),
        String(w.failed_24h),
      ]),
      'nothing undelivered',
    ) +
    `</section>`
  );
}

function replicasPanel(replicas: StatusReport['replicas']): string {
  return (
    `<section class="panel" data-panel="replicas"><h2>Replicas <small>(seen in the last 10 minutes)</small></h2>` +
    table(
      ['instance', 'version', 'started', 'seen', ''],
      replicas.map((r) => [
        `<code>${e(r.instance_id)}</code>`,
        e(r.version),
        time(r.started_at),
        time(r.seen_at),
        r.live ? '<span class="badge completed">live</span>' : '<span class="badge cancelled">gone</span>',
      ]),
      'none',
    ) +
    `</section>`
  );
}

/** The panels (what the page's script re-fetches from `GET /status/panels` and swaps in). */
export function renderPanels(report: StatusReport): string {
  return (
    `<p class="generated">Updated ${time(report.generated_at)} UTC (database clock)</p>` +
    syncPanel(report.sync) +
    ordersPanel(report.orders) +
    upstreamPanel(report.upstream, report.window.minutes) +
    accuracyPanel(report.catalog_accuracy, report.window.minutes) +
    webhooksPanel(report.webhooks) +
    replicasPanel(report.replicas)
  );
}

function document(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><title>${e(title)}</title>` +
    `<link rel="stylesheet" href="/status/assets/status.css">` +
    `<script src="/status/assets/status.js" defer></script></head><body>${body}</body></html>`
  );
}

/** The whole page: the panels, refreshed in place by the script every few seconds. */
export function renderPage(report: StatusReport): string {
  return document(
    'Service status',
    `<header><h1>Service status</h1><button id="logout" type="button">Log out</button></header>` +
      `<main id="panels" data-refresh-ms="5000">${renderPanels(report)}</main>`,
  );
}

/** The login form: the script posts the key once as JSON and reloads; the key never goes in a URL. */
export function renderLogin(): string {
  return document(
    'Service status — log in',
    `<main class="login"><h1>Service status</h1>` +
      `<form id="login" autocomplete="off"><label for="key">Admin API key</label>` +
      `<input id="key" name="key" type="password" required autocomplete="off" spellcheck="false">` +
      `<button type="submit">Log in</button><p id="login-error" class="error" role="alert" hidden></p></form>` +
      `<noscript><p>This form needs JavaScript; or send the key in the Authorization header.</p></noscript></main>`,
  );
}
