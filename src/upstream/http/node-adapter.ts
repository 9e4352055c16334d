import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import axios, { type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';

/**
 * Content codings this adapter decodes, and so the only ones it asks for. `deflate` is not asked for
 * (servers disagree on raw vs zlib-wrapped deflate), nor `compress` (LZW, which zlib cannot read).
 */
export const ACCEPT_ENCODING = 'gzip, br';

/**
 * This adapter's own request config field: called once the request (headers and body) has been handed to the
 * socket — the request's 'finish', after a connect if there was one — and never for a request that did not leave.
 * The rate limiter counts its window at this time (rate-limiter.ts). Only a plain function: axios's config merge
 * passes it through untouched.
 */
export interface WireHookConfig {
  onWritten?: () => void;
}

/**
 * The axios adapter of the upstream client's HttpService: one request over node:http or node:https with
 * the instance's keep-alive agent (`httpAgent` / `httpsAgent`), the body read whole as UTF-8 text.
 *
 * What it keeps of axios's stock http adapter: every status is handed to `validateStatus` (settle's rule);
 * response headers as received; `maxContentLength` caps the decoded body (ERR_BAD_RESPONSE, the request
 * destroyed); `signal` aborts the request and the read (CanceledError); a connection error keeps its node
 * code (ECONNREFUSED, ECONNRESET …); gzip and brotli bodies are decoded. What it does not do, because this
 * client never asks for it: redirects (a 3xx is returned as is), proxies, `params`, `timeout` (the attempt's
 * AbortSignal is the timeout), streams, forms, progress events. Stricter than stock: a body cut short (the
 * connection closed mid-body, a truncated gzip stream) always rejects, never resolves part of a body.
 *
 * Why: per 1000-item listings page the stock adapter cost ~0.3-0.7 ms of its own (config walks, header
 * objects, stream plumbing) and kept each page's buffers reachable until the next scavenge
 * (docs/BENCHMARKS.md, upstream-walk).
 */
export const nodeHttpAdapter: AxiosAdapter = (config) =>
  new Promise<AxiosResponse>((resolve, reject) => {
    let to: Target;
    try {
      to = target(config.baseURL, config.url ?? '');
    } catch (error) {
      reject(axios.AxiosError.from(error, axios.AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const data: unknown = config.data;
    if (data !== undefined && data !== null && typeof data !== 'string' && !Buffer.isBuffer(data)) {
      reject(new axios.AxiosError('request body must be text', axios.AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const signal = config.signal as AbortSignal | undefined;
    if (signal?.aborted) {
      reject(new axios.CanceledError(undefined, config));
      return;
    }
    const limit =
      typeof config.maxContentLength === 'number' && config.maxContentLength > -1
        ? config.maxContentLength
        : Infinity;
    const headers = requestHeaders(config, data ?? undefined);
    const method = (config.method ?? 'get').toUpperCase();

    let settled = false;
    let request: http.ClientRequest;
    try {
      request = (to.origin.secure ? https : http).request({
        hostname: to.origin.hostname,
        port: to.origin.port,
        path: to.path,
        method,
        headers,
        agent: (to.origin.secure ? config.httpsAgent : config.httpAgent) as http.Agent | undefined,
      });
    } catch (error) {
      // A path node refuses (unescaped characters): the request was never sent.
      reject(axios.AxiosError.from(error, axios.AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const onAbort = (): void => fail(new axios.CanceledError(undefined, config, request));
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      // Never back to the pool: the socket may sit mid-body.
      request.destroy();
      reject(error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    tellWhenWritten(request, config as WireHookConfig);
    request.on('error', (error) => fail(axios.AxiosError.from(error, undefined, config, request)));
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const tooLarge = (): Error =>
        new axios.AxiosError(
          `maxContentLength size of ${limit} exceeded`,
          axios.AxiosError.ERR_BAD_RESPONSE,
          config,
          request,
        );
      const declared = Number(res.headers['content-length']);
      if (declared > limit) {
        fail(tooLarge());
        return;
      }
      const source = decoded(res, method, status, (error) => fail(cutShort(error, config, request)));
      const chunks: Buffer[] = [];
      let size = 0;
      source.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > limit) fail(tooLarge());
        else chunks.push(chunk);
      });
      source.on('error', (error) => fail(cutShort(error, config, request)));
      // Without a decoder, 'close' before 'end' is a body cut short (Node also emits 'error' then).
      res.on('close', () => {
        if (!res.complete) fail(cutShort(undefined, config, request));
      });
      source.on('end', () => {
        if (settled) return;
        if (!res.complete) {
          fail(cutShort(undefined, config, request));
          return;
        }
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8');
        chunks.length = 0;
        const response: AxiosResponse = {
          data: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text,
          status,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          config,
        };
        if (!config.validateStatus || status === 0 || config.validateStatus(status)) resolve(response);
        else {
          const code =
            status >= 400 && status < 500
              ? axios.AxiosError.ERR_BAD_REQUEST
              : axios.AxiosError.ERR_BAD_RESPONSE;
          reject(
            new axios.AxiosError(
              `Request failed with status code ${status}`,
              code,
              config,
              request,
              response,
            ),
          );
        }
      });
    });
    if (data === undefined || data === null) request.end();
    else request.end(data);
  });

/** WireHookConfig.onWritten, told at the request's 'finish': headers and body handed to the socket. */
function tellWhenWritten(request: http.ClientRequest, config: WireHookConfig): void {
  if (typeof config.onWritten === 'function') request.once('finish', config.onWritten);
}

interface Origin {
  secure: boolean;
  hostname: string;
  port: string;
  /** The base URL's path without its trailing slashes ('' for none). */
  prefix: string;
}

interface Target {
  origin: Origin;
  path: string;
}

/** Parsed base URLs (a client has one): the URL is not parsed again on every request. */
const origins = new Map<string, Origin>();

function originOf(url: URL): Origin {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('unsupported protocol');
  return {
    secure: url.protocol === 'https:',
    // node:http wants an IPv6 literal without its brackets.
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    prefix: url.pathname.replace(/\/+$/, ''),
  };
}

/**
 * Where a request goes, as axios's buildFullPath joins it: an absolute url as is, else the base URL and
 * the path joined by one slash (a base path prefix is kept).
 */
function target(baseURL: string | undefined, url: string): Target {
  if (baseURL === undefined || /^([a-z][a-z\d+\-.]*:)?\/\//i.test(url)) {
    const parsed = new URL(url);
    return { origin: originOf(parsed), path: parsed.pathname + parsed.search };
  }
  let origin = origins.get(baseURL);
  if (origin === undefined) {
    origin = originOf(new URL(baseURL));
    if (origins.size >= 16) origins.clear();
    origins.set(baseURL, origin);
  }
  return { origin, path: `${origin.prefix}/${url.replace(/^\/+/, '')}` };
}

function requestHeaders(config: InternalAxiosRequestConfig, data: string | Buffer | undefined) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers.toJSON() as Record<string, unknown>)) {
    if (typeof value === 'string') headers[name] = value;
    else if (typeof value === 'number' || value === true) headers[name] = String(value);
    else if (Array.isArray(value)) headers[name] = value.join(', ');
  }
  if (!config.headers.has('accept-encoding')) headers['accept-encoding'] = ACCEPT_ENCODING;
  if (data !== undefined) headers['content-length'] = String(Buffer.byteLength(data));
  return headers;
}

/**
 * The body as sent, or through a decoder for the codings asked for (header removed, as the stock
 * adapter does). zlib's defaults are strict: a truncated stream is an error, never a shorter body.
 */
function decoded(
  res: http.IncomingMessage,
  method: string,
  status: number,
  onError: (error: Error) => void,
): Readable {
  const coding = res.headers['content-encoding']?.trim().toLowerCase();
  if (coding === undefined || method === 'HEAD' || status === 204 || status === 304) return res;
  let decoder: zlib.Gunzip | zlib.BrotliDecompress;
  if (coding === 'gzip' || coding === 'x-gzip') decoder = zlib.createGunzip();
  else if (coding === 'br') decoder = zlib.createBrotliDecompress();
  else return res;
  delete res.headers['content-encoding'];
  delete res.headers['content-length'];
  res.on('error', onError);
  res.pipe(decoder);
  return decoder;
}

/**
 * A body that did not arrive whole. A connection lost mid-body keeps its node code (ECONNRESET: a
 * connection failure, as before the status line); a stream zlib cannot decode is an unreadable body.
 */
function cutShort(
  cause: Error | undefined,
  config: InternalAxiosRequestConfig,
  request: http.ClientRequest,
): Error {
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new axios.AxiosError(
      'response body unreadable',
      axios.AxiosError.ERR_BAD_RESPONSE,
      config,
      request,
    );
  }
  if (typeof code === 'string') return axios.AxiosError.from(cause, undefined, config, request);
  return new axios.AxiosError('response body cut short', 'ECONNRESET', config, request);
}
