import { type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import axios from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveUpstreamOptions } from '../upstream.options';
import {
  TransportError,
  agentOf,
  createUpstreamHttpService,
  httpServiceTransport,
  type HttpCall,
  type Transport,
} from './attempt';
import { ACCEPT_ENCODING, nodeHttpAdapter } from './node-adapter';
import { startStub } from '../../../test/contract/upstream-client.support';
import { waitUntil } from '../../../test/support/wait';

const KEY = 'test-key-0123456789';
const CAP = 16 * 1024 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
});

/** The production transport over an HttpService made by createUpstreamHttpService (so over this adapter). */
async function setup(handler: Handler, baseUrl?: (url: string) => string) {
  const server = await startStub(handler);
  cleanups.push(() => server.close());
  const http = createUpstreamHttpService(
    resolveUpstreamOptions({
      baseUrl: baseUrl?.(server.url) ?? server.url,
      apiKey: KEY,
      environment: 'sandbox',
    }),
  );
  cleanups.push(() => agentOf(http).destroy());
  const sut: Transport = httpServiceTransport(http, KEY);
  return { server, sut, http };
}

function get(path: string, extra: Partial<HttpCall> = {}): HttpCall {
  return { operation: 'listActiveListings', kind: 'read', method: 'GET', route: path, path, ...extra };
}

function send(sut: Transport, call: HttpCall, signal = new AbortController().signal) {
  return sut.send(call, 'req-1', signal);
}

describe(nodeHttpAdapter.name, () => {
  it('is the adapter of the HttpService the client sends through', async () => {
    const { http } = await setup((_req, res) => res.end());
    expect(http.axiosRef.defaults.adapter).toBe(nodeHttpAdapter);
  });

  it('hands back 200, 4xx and 5xx answers with their bodies', async () => {
    const { sut } = await setup((req, res) => {
      const status = Number(req.url?.split('/')[2]);
      res.writeHead(status, { 'content-type': 'application/json' }).end(`{"status":${status}}`);
    });
    for (const status of [200, 404, 422, 503]) {
      await expect(send(sut, get(`/s/${status}`))).resolves.toEqual({ status, body: `{"status":${status}}` });
    }
  });

  it('keeps the response headers: the Retry-After of a 429', async () => {
    const { sut } = await setup((_req, res) => res.writeHead(429, { 'retry-after': '7' }).end('slow down'));
    await expect(send(sut, get('/x'))).resolves.toEqual({ status: 429, body: 'slow down', retryAfter: '7' });
  });

  it('sends the method, path, body and headers as given, over one kept-alive connection', async () => {
    const { sut, server } = await setup((_req, res) => res.end('{}'));
    const body = '{"note":"é ✓"}';
    const post = get('/wallets/users/u1/signatures?x=%2F', {
      method: 'POST',
      kind: 'sign',
      body,
      headers: { 'idempotency-key': 'k-1' },
    });
    await send(sut, post);
    await send(sut, get('/second'));
    const [first, second] = server.hits;
    expect(first).toMatchObject({ method: 'POST', url: '/wallets/users/u1/signatures?x=%2F', body });
    expect(first?.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-api-key': KEY,
      'x-request-id': 'req-1',
      'idempotency-key': 'k-1',
      accept: 'application/json',
      'accept-encoding': ACCEPT_ENCODING,
    });
    expect(second).toMatchObject({ method: 'GET', url: '/second', body: '' });
    expect(second?.socket).toBe(first?.socket);
  });

  it('joins a base URL with a path prefix and the call path', async () => {
    const { sut, server } = await setup(
      (_req, res) => res.end('{}'),
      (url) => `${url}/api/v0`,
    );
    await send(sut, get('/indexer/events/upcoming?limit=1'));
    expect(server.hits[0]?.url).toBe('/api/v0/indexer/events/upcoming?limit=1');
  });

  it('returns a 3xx as is, without following it', async () => {
    const { sut, server } = await setup((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    await expect(send(sut, get('/x'))).resolves.toEqual({ status: 302, body: '' });
    expect(server.hits.map((hit) => hit.url)).toEqual(['/x']);
  });

  it('decodes gzip and brotli bodies', async () => {
    const text = JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => ({ id: `${i}` })) });
    const { sut } = await setup((req, res) => {
      const br = req.url === '/br';
      res
        .writeHead(200, { 'content-encoding': br ? 'br' : 'gzip' })
        .end(br ? brotliCompressSync(text) : gzipSync(text));
    });
    await expect(send(sut, get('/gzip'))).resolves.toEqual({ status: 200, body: text });
    await expect(send(sut, get('/br'))).resolves.toEqual({ status: 200, body: text });
  });

  it('refuses a truncated gzip body as unreadable', async () => {
    const zipped = gzipSync('{"items":[]}'.repeat(100));
    const { sut } = await setup((_req, res) =>
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(zipped.subarray(0, zipped.length >> 1)),
    );
    await expect(send(sut, get('/x'))).rejects.toEqual(
      new TransportError(true, 'response body too large or unreadable'),
    );
  });

  it('refuses a body over 16 MiB as unreadable and drops the connection', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const { sut, server } = await setup((_req, res) => {
      // Chunked, no length announced: the cap is met while reading.
      res.writeHead(200);
      let sent = 0;
      const more = (): void => {
        while (sent < 17 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await expect(send(sut, get('/big'))).rejects.toEqual(
      new TransportError(true, 'response body too large or unreadable'),
    );
    await waitUntil(() => server.openConnections() === 0, 2_000, 5);
  });

  it('refuses an announced Content-Length over 16 MiB before reading the body', async () => {
    const { sut } = await setup((_req, res) => {
      res.writeHead(200, { 'content-length': String(CAP + 1) });
      res.write('{');
    });
    // Bounded: a client that waited for the body would end cancelled here instead.
    await expect(send(sut, get('/big'), AbortSignal.timeout(5_000))).rejects.toEqual(
      new TransportError(true, 'response body too large or unreadable'),
    );
  });

  it('aborts the request and the read when the signal aborts mid-body', async () => {
    let onStarted: (() => void) | undefined;
    const started = new Promise<void>((resolve) => (onStarted = resolve));
    const { sut, server } = await setup((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"items":[', () => onStarted?.());
    });
    const controller = new AbortController();
    const sending = send(sut, get('/slow'), controller.signal);
    await started;
    controller.abort('cancelled');
    const error: unknown = await sending.catch((caught: unknown) => caught);
    expect(axios.isCancel(error)).toBe(true);
    await waitUntil(() => server.openConnections() === 0, 2_000, 5);
  });

  it('rejects a body cut short by the server as a lost connection, never a shorter body', async () => {
    const { sut } = await setup((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"items":[', () => res.socket?.destroy());
    });
    await expect(send(sut, get('/x'))).rejects.toEqual(
      new TransportError(false, 'connection failed (ECONNRESET)'),
    );
  });

  it('keeps the node code of a refused connection', async () => {
    const gone = await startStub((_req, res) => res.end());
    await gone.close();
    const http = createUpstreamHttpService(
      resolveUpstreamOptions({ baseUrl: gone.url, apiKey: KEY, environment: 'sandbox' }),
    );
    cleanups.push(() => agentOf(http).destroy());
    await expect(send(httpServiceTransport(http, KEY), get('/x'))).rejects.toEqual(
      new TransportError(false, 'connection failed (ECONNREFUSED)'),
    );
  });

  it('tells onWritten once the request is on the socket, before the answer; never for a connection refused', async () => {
    const events: string[] = [];
    // The stub answers once it has read the whole request.
    const { sut } = await setup((_req, res) => res.end('{}'));
    const onWritten = (): number => events.push('written');
    const body = 'x'.repeat(100_000);
    for (const call of [get('/new-socket'), get('/kept-alive', { method: 'POST', kind: 'sign', body })]) {
      await sut.send(call, 'req-1', new AbortController().signal, onWritten);
      events.push('answered');
    }
    expect(events).toEqual(['written', 'answered', 'written', 'answered']);

    const gone = await startStub((_req, res) => res.end());
    await gone.close();
    const http = createUpstreamHttpService(
      resolveUpstreamOptions({ baseUrl: gone.url, apiKey: KEY, environment: 'sandbox' }),
    );
    cleanups.push(() => agentOf(http).destroy());
    let refusedWritten = 0;
    await expect(
      httpServiceTransport(http, KEY).send(get('/x'), 'req-2', new AbortController().signal, () => {
        refusedWritten++;
      }),
    ).rejects.toBeInstanceOf(TransportError);
    expect(refusedWritten).toBe(0);
  });

  it('speaks TLS to an https base URL (a plain-HTTP server fails the handshake)', async () => {
    const { sut, server } = await setup(
      (_req, res) => res.end('{}'),
      (url) => url.replace('http:', 'https:'),
    );
    const error: unknown = await send(sut, get('/x')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).unreadable).toBe(false);
    expect((error as TransportError).detail).not.toContain('ECONNREFUSED');
    expect(server.hits).toEqual([]);
  });
});
