/// <reference lib="dom" />
// The page.evaluate callbacks run in the browser (DOM types); the rest runs in Node.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/status.report';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, market, orderBody, postOrder, refreshMirror } from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = 'test-artifacts';
const PANELS = ['sync', 'orders', 'upstream', 'accuracy', 'webhooks', 'replicas'];

/** What the page shows, read in the browser: panels, plots and what makes it readable. */
interface PageView {
  panels: { name: string; text: number }[];
  plots: { title: string; maxPoints: number; drawn: boolean; width: number }[];
  scrollWidth: number;
  innerWidth: number;
  bodyFontPx: number;
  smallestTextPx: number;
  clipped: string[];
  updated: string;
}

async function view(page: Page): Promise<PageView> {
  return page.evaluate((): PageView => {
    // oxlint-disable-next-line unicorn/consistent-function-scoping -- runs in the browser: nothing outside exists there
    const px = (el: Element): number => Number.parseFloat(getComputedStyle(el).fontSize);
    const texts = [
      ...document.querySelectorAll('#panels p, #panels td, #panels th, #panels li, #panels figcaption'),
    ];
    const inner = window.innerWidth;
    const clipped = [...document.querySelectorAll('.panel, .plot svg, h1, h2, .table, .facts, .counts')]
      .filter((el) => {
        const box = el.getBoundingClientRect();
        // Off the screen, empty, or wider than its box (a table scrolled sideways hides columns).
        return (
          box.left < 0 || box.right > inner + 0.5 || box.width === 0 || el.scrollWidth > el.clientWidth + 1
        );
      })
      .map((el) => el.tagName + (el.getAttribute('data-panel') ? `[${el.getAttribute('data-panel')}]` : ''));
    return {
      panels: [...document.querySelectorAll('[data-panel]')].map((el) => ({
        name: el.getAttribute('data-panel') ?? '',
        text: (el.textContent ?? '').trim().length,
      })),
      plots: [...document.querySelectorAll('figure.plot')].map((fig) => {
        const paths = [...fig.querySelectorAll('svg path.line')];
        return {
          title: fig.getAttribute('data-plot') ?? '',
          maxPoints: Math.max(0, ...paths.map((p) => Number(p.getAttribute('data-points')))),
          drawn: paths.some(
            (p) => (p.getAttribute('d') ?? '').includes('L') && p.getBoundingClientRect().width > 0,
          ),
          width: fig.querySelector('svg')?.getBoundingClientRect().width ?? 0,
        };
      }),
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: inner,
      bodyFontPx: px(document.body),
      smallestTextPx: Math.min(...texts.map(px)),
      clipped,
      updated: document.querySelector('.generated time')?.getAttribute('datetime') ?? '',
    };
  });
}

describe('Status page in headless Chromium (browser)', () => {
  let t: TestApp;
  let admin: TestClient;
  let buyers: TestClient;
  let reader: TestClient;
  let browser: Browser;
  let profile: string;
  let base: string;
  const ordering = { on: true };
  let placed = 0;
  let ordersLoop: Promise<void> = Promise.resolve();

  /** Places an order every ~300 ms until stopped (bounded), so orders are in flight while the page is read. */
  async function keepOrdering(): Promise<void> {
    for (let n = 0; ordering.on && n < 1_000; n++) {
      const { listing, buyer } = market(t.sandbox, `browser-${n}`);
      await refreshMirror(t.app, listing.eventId);
      // Served by the read API: the accuracy sampler draws from what was served (some are bought after).
      await t.app.inject({
        method: 'GET',
        url: `/v1/events/${listing.eventId}/listings`,
        headers: bearer(reader.key),
      });
      const res = await postOrder(t.app, buyers.key, `browser-${n}`, orderBody(listing, buyer));
      if (res.status === 202) placed++;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  const report = async (): Promise<StatusReport> => {
    const res = await fetch(`${base}/v1/admin/status`, { headers: bearer(admin.key) });
    return (await res.json()) as StatusReport;
  };

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        STATUS_RECORD_INTERVAL_MS: '500',
        MIRROR_ACCURACY_SAMPLE_INTERVAL_MS: '300',
        RATE_LIMIT_CATALOG_READ: '100000',
      },
      {
        // Some listing reads fail (retried): the errors plot has something to draw.
        sandbox: {
          landingDelayMs: 1_500,
          faults: [{ operation: 'listings', kind: 'error', status: 503, rate: 0.1 }],
        },
      },
    );
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    admin = await issueTestKey(t.app, ['admin']);
    buyers = await issueTestKey(t.app, ['orders:write']);
    reader = await issueTestKey(t.app, ['catalog:read']);
    profile = mkdtempSync(join(tmpdir(), 'status-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profile}`,
      ],
    });
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    ordering.on = false;
    await ordersLoop;
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  it('with orders in flight, every panel has data and every plot draws a series, at 1280×800 and 390×844', async () => {
    // Two passes per resource: the items/s plot has two points per line.
    for (let i = 0; i < 2; i++) {
      for (const resource of ['events', 'listings']) {
        const res = await fetch(`${base}/v1/admin/sync`, {
          method: 'POST',
          headers: { ...bearer(admin.key), 'content-type': 'application/json' },
          body: JSON.stringify({ resource }),
        });
        const passId = ((await res.json()) as { passId: string }).passId;
        await waitUntil(async () => {
          const pass = await fetch(`${base}/v1/admin/sync/${passId}`, { headers: bearer(admin.key) });
          return ((await pass.json()) as { status: string }).status !== 'running';
        }, 20_000);
      }
    }
    ordersLoop = keepOrdering();
    // Finals in two distinct minutes (at most one minute boundary away), and orders in flight.
    await waitUntil(
      async () => {
        const r = await report();
        const p50 = r.orders.time_to_final_ms.find((s) => s.label === 'p50')?.points ?? [];
        const accuracy = r.catalog_accuracy.accuracy_per_minute[0]?.points ?? [];
        const twoMinutesSampled = accuracy.some((p, i) => p.value !== null && accuracy[i + 1]?.value != null);
        return (
          p50.filter((p) => p.value !== null).length >= 2 &&
          Object.keys(r.orders.open_by_state).length > 0 &&
          twoMinutesSampled
        );
      },
      90_000,
      1_000,
    );

    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const login = await page.goto(`${base}/status`);
    expect(login?.status()).toBe(200);
    await page.type('#key', admin.key);
    await Promise.all([page.waitForNavigation(), page.click('#login button[type="submit"]')]);
    expect(page.url()).toBe(`${base}/status`);
    await page.waitForSelector('[data-panel="orders"]');
    const cookies = await browser.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
      ['bff_status_session', true, 'Strict'],
    ]);
    expect(cookies[0]?.value).not.toContain(admin.key);

    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewport({ width, height, deviceScaleFactor: 1 });
      await page.reload();
      await page.waitForSelector('[data-panel="replicas"]');
      const sut = await view(page);
      expect(sut.panels.map((p) => p.name)).toEqual(PANELS);
      for (const panel of sut.panels)
        expect({ panel: panel.name, text: panel.text > 20 }).toEqual({ panel: panel.name, text: true });
      // Five, the accuracy panel's two, and its served-data age plot when the read path observes it.
      expect(sut.plots.length).toBeGreaterThanOrEqual(7);
      for (const plot of sut.plots) {
        const { title } = plot;
        expect({ title, points: plot.maxPoints > 1, drawn: plot.drawn, wide: plot.width >= 300 }).toEqual({
          title,
          points: true,
          drawn: true,
          wide: true,
        });
      }
      // No horizontal scroll.
      expect(sut.scrollWidth).toBeLessThanOrEqual(sut.innerWidth);
      expect(sut.bodyFontPx).toBeGreaterThanOrEqual(12);
      expect(sut.smallestTextPx).toBeGreaterThanOrEqual(12);
      expect(sut.clipped).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, `status-${width}x${height}.png`), fullPage: true });
    }

    // Live: the script re-fetches the panels (every 5 s) and the figures move with the orders.
    const before = await view(page);
    const ordersText = async (): Promise<string> =>
      page.$eval('[data-panel="orders"]', (el) => el.textContent ?? '');
    const ordersBefore = await ordersText();
    await page.waitForFunction(
      (updated: string) => document.querySelector('.generated time')?.getAttribute('datetime') !== updated,
      { timeout: 15_000 },
      before.updated,
    );
    await waitUntil(async () => (await ordersText()) !== ordersBefore, 20_000, 500);
    expect(placed).toBeGreaterThan(2);

    const r = await report();
    expect(Object.values(r.orders.final_24h).reduce((a, n) => a + n, 0)).toBeGreaterThan(0);
    expect(r.upstream.by_operation.some((o) => o.errors > 0)).toBe(true);
    expect(r.upstream.request_rate_per_second).toBeGreaterThanOrEqual(0);
    await page.close();
  });
});
