import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { CountingProxy } from '../support/counting-proxy';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';

const REGISTER = './dist/src/tracing/tracing.register.js';

/** What `node --require <register> -e …` loaded: @opentelemetry files in require.cache, and whether http is patched. */
function probe(env: Record<string, string>): { otel: string[]; httpPatched: boolean } {
  const script = `
    const otel = Object.keys(require.cache).filter((f) => f.includes('@opentelemetry')).map((f) => f.split('node_modules/')[1]);
    const http = require('node:http');
    process.stdout.write(JSON.stringify({ otel, httpPatched: typeof http.request.__wrapped === 'boolean' }));
    process.exit(0);`;
  const result = spawnSync(process.execPath, ['--require', REGISTER, '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (result.status !== 0) throw new Error(`probe exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as { otel: string[]; httpPatched: boolean };
}

describe('the tracing register, loaded with node --require (e2e: real processes)', () => {
  it('off (no OTLP endpoint): loads no @opentelemetry module at all and patches nothing', () => {
    expect(probe({})).toEqual({ otel: [], httpPatched: false });
  });

  it('on: loads the SDK and the instrumentations before the app, and patches http', () => {
    const sut = probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(sut.httpPatched).toBe(true);
    const packages = new Set(sut.otel.map((f) => f.split('/').slice(0, 2).join('/')));
    expect([...packages]).toEqual(
      expect.arrayContaining([
        '@opentelemetry/sdk-trace-node',
        '@opentelemetry/instrumentation-http',
        '@opentelemetry/instrumentation-pg',
        '@opentelemetry/exporter-trace-otlp-http',
      ]),
    );
  });
});

describe('a traced service process exports over OTLP/HTTP and sends traceparent upstream (e2e)', () => {
  const adminUrl = inject('databaseAdminUrl');
  const apiKey = generateApiKey();
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  /** Bodies the loopback OTLP receiver got (JSON, as exporter-trace-otlp-http sends them). */
  const exported: string[] = [];
  let receiver: Server;
  let sandbox: SandboxHandle;
  let proxy: CountingProxy;
  let databaseUrl = '';
  let service: ServiceProcess;
  let listingPath = '';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        exported.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    const receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0, seed: 'tracing', events: 2, listings: 10 });
    const { eventId } = sandbox.admin.createEvent();
    const listing = sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: 'trace-seller' },
      askPriceMinor: 1_000n,
    });
    listingPath = `/v1/listings/${listing.event_id}/${listing.ticket_id}?fresh=true`;
    proxy = await CountingProxy.start(sandbox.url);
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    service = await spawnService({
      NODE_ENV: 'test',
      ...TEST_DEPLOYMENT_ENV,
      DATABASE_URL: databaseUrl,
      BFF_BOOTSTRAP_API_KEY: apiKey,
      UPSTREAM_BASE_URL: proxy.url,
      UPSTREAM_API_KEY: sandbox.admin.apiKey,
      SYNC_ENABLED: 'false',
      SYNC_ON_STARTUP: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      // Nothing is exported on a timer during the test: what arrives, arrives by the flush on SIGTERM.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
  }, 60_000);

  afterAll(async () => {
    if (service?.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await waitForExit(service.child, 15_000).catch(() => undefined);
    }
    await proxy?.close();
    await sandbox?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it("continues the caller's trace, hands it to the upstream and logs its trace_id", async () => {
    const from = Date.now();
    const res = await fetch(`${service.url}${listingPath}`, {
      headers: { authorization: `Bearer ${apiKey}`, traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(res.status).toBe(200);

    // The upstream saw a traceparent of the caller's trace (a new parent span: our client span).
    const seen = proxy.requests.filter((r) => r.at >= from && r.path.startsWith('/indexer/listings/active'));
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) {
      expect(r.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(r.traceparent).not.toContain(callerSpanId);
    }

    // The request's log line carries the trace id.
    await waitUntil(() => /"msg":"request completed"/.test(service.output()), 5_000, 50);
    const line = service
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"request completed"') && l.includes('/v1/listings/'));
    expect(line).toContain(`"trace_id":"${traceId}"`);
  });

  it('exports the spans over OTLP/HTTP, flushed on SIGTERM, without the keys', async () => {
    const res = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    expect(exported).toEqual([]);
    service.child.kill('SIGTERM');
    expect(await waitForExit(service.child, 15_000)).toBe(0);
    const all = exported.join('\n');
    expect(all).toContain(traceId);
    expect(all).toContain('GET /v1/listings/:eventId/:ticketId');
    expect(all).toContain('upstream listActiveListings');
    expect(all).toContain('GET /v1/me');
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain(sandbox.admin.apiKey);
  });
});

describe('a collector that never answers does not hold the shutdown (e2e)', () => {
  const adminUrl = inject('databaseAdminUrl');
  const apiKey = generateApiKey();
  let blackhole: Server;
  let sandbox: SandboxHandle;
  let databaseUrl = '';
  let service: ServiceProcess;
  let exportsSeen = 0;

  beforeAll(async () => {
    // Takes the export request and never answers it: the exporter waits its own 10 s timeout.
    blackhole = createServer(() => void exportsSeen++);
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const address = blackhole.address();
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'tracing-blackhole',
      events: 1,
      listings: 2,
    });
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    service = await spawnService({
      NODE_ENV: 'test',
      ...TEST_DEPLOYMENT_ENV,
      DATABASE_URL: databaseUrl,
      BFF_BOOTSTRAP_API_KEY: apiKey,
      UPSTREAM_BASE_URL: sandbox.url,
      UPSTREAM_API_KEY: sandbox.admin.apiKey,
      SYNC_ENABLED: 'false',
      SYNC_ON_STARTUP: 'false',
      SHUTDOWN_TIMEOUT_MS: '8000',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
  }, 60_000);

  afterAll(async () => {
    if (service?.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await waitForExit(service.child, 15_000).catch(() => undefined);
    }
    await sandbox?.close();
    blackhole?.closeAllConnections();
    await new Promise<void>((resolve) => (blackhole ? blackhole.close(() => resolve()) : resolve()));
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it('gives up on the flush within the shutdown budget, warns, and exits 0', async () => {
    const res = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await waitForExit(service.child, 15_000)).toBe(0);
    // The flush did try (the span of GET /v1/me was queued), then gave up instead of waiting out the exporter.
    expect(exportsSeen).toBeGreaterThan(0);
    expect(service.output()).toContain('tracing flush gave up at shutdown');
    expect(service.output()).not.toContain('shutdown timed out');
  });
});
