import http from 'node:http';
import https from 'node:https';
import { HttpService } from '@nestjs/axios';
import axios, { type AxiosInstance } from 'axios';
import { AttemptAborted, AttemptFailure, TIMEOUT_REASON, type Answer } from './upstream.attempt';
import { TRANSIENT_STATUSES } from './upstream.error';
import type { HttpCall } from './upstream.http';
import type { ResolvedUpstreamOptions } from './upstream.options';

/**
 * The @nestjs/axios HttpService the upstream client sends through: one axios instance over one keep-alive
 * agent. Bodies are text in and out (parsed later without precision loss), every status is returned (the
 * status decides, not axios), redirects are not followed and no proxy from the environment is used.
 */
export function createUpstreamHttpService(options: ResolvedUpstreamOptions): HttpService {
  const { concurrency } = options;
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1_000,
    maxSockets: concurrency.maxInFlight,
    maxFreeSockets: concurrency.maxInFlight,
    // Idle keep-alive sockets are closed after 4 s, before common server idle timeouts (5 s), so a
    // request rarely lands on a socket the server is closing.
    timeout: 4_000,
    scheduling: 'lifo' as const,
  };
  const agent = options.baseUrl.startsWith('https:')
    ? new https.Agent(agentOptions)
    : new http.Agent(agentOptions);
  const instance = axios.create({
    baseURL: options.baseUrl,
    httpAgent: agent,
    httpsAgent: agent,
    proxy: false,
    maxRedirects: 0,
    responseType: 'text',
    transformRequest: [(data: unknown) => data],
    transformResponse: [(data: unknown) => data],
    validateStatus: () => true,
    maxContentLength: options.maxResponseBytes,
    maxBodyLength: options.maxResponseBytes,
  });
  // @nestjs/axios is ESM and sees axios's ESM typings; this CommonJS build sees the CJS ones. Same
  // runtime shape, two declarations: bridge them here, once.
  return new HttpService(instance as unknown as ConstructorParameters<typeof HttpService>[0]);
}

/** The wire (the only place the HTTP library is used): one request at a time, classified by the caller. */
export class UpstreamTransport {
  readonly agent: http.Agent;
  private readonly axios: AxiosInstance;

  constructor(
    private readonly options: ResolvedUpstreamOptions,
    httpService: HttpService = createUpstreamHttpService(options),
  ) {
    this.axios = httpService.axiosRef as unknown as AxiosInstance;
    this.agent = (this.axios.defaults.httpAgent ?? this.axios.defaults.httpsAgent) as http.Agent;
  }

  /** Destroys pooled sockets. */
  close(): void {
    this.agent.destroy();
  }

  /**
   * One request. Transient 5xx (500/502/503/504), network errors and our own timeout throw AttemptFailure
   * (the breaker counts those); caller cancellation and unreadable bodies throw AttemptAborted.
   */
  async send(
    call: HttpCall,
    requestId: string,
    signal: AbortSignal,
    sent: { value: boolean },
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'ticket-resale-bff',
      'x-api-key': this.options.apiKey,
      'x-request-id': requestId,
      ...call.headers,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    try {
      sent.value = true;
      const response = await this.axios.request<string>({
        method: call.method,
        url: call.path,
        data: call.body,
        headers,
        signal,
      });
      const body = typeof response.data === 'string' ? response.data : '';
      const retryAfter = response.headers['retry-after'] as unknown;
      const answer: Answer = {
        status: response.status,
        body,
        ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
      };
      if (TRANSIENT_STATUSES.has(answer.status)) {
        throw new AttemptFailure(
          `${answer.status}`,
          'UNAVAILABLE',
          `HTTP ${answer.status}`,
          answer.status,
          body,
        );
      }
      return answer;
    } catch (error) {
      if (error instanceof AttemptFailure) throw error;
      if (signal.aborted) {
        if (signal.reason === TIMEOUT_REASON)
          throw new AttemptFailure('timeout', 'TIMEOUT', 'attempt timed out');
        throw new AttemptAborted('cancelled', 'TIMEOUT', 'cancelled by the caller');
      }
      // Only the error's code is kept: axios errors carry the request config, headers (the key) included.
      const code = axios.isAxiosError(error) && typeof error.code === 'string' ? error.code : 'EUNKNOWN';
      if (code === 'ERR_BAD_RESPONSE' || code === 'ERR_FR_MAX_CONTENT_LENGTH_EXCEEDED') {
        throw new AttemptAborted('network', 'BAD_RESPONSE', 'response body too large or unreadable');
      }
      throw new AttemptFailure(
        'network',
        'UNAVAILABLE',
        `connection failed (${code.replace(/[^A-Z0-9_]/g, '')})`,
      );
    }
  }
}
