import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/app-error';
import { AuthConfig } from '../config/auth.config';
import { ReplicasService } from '../replicas/replicas.service';
import type { RateLimitBucket } from './authenticated-request';

/** Per-window request budget of each bucket, from configuration. */
const LIMIT_VARIABLE = {
  default: 'RATE_LIMIT_DEFAULT',
  'catalog:read': 'RATE_LIMIT_CATALOG_READ',
  'listings:write': 'RATE_LIMIT_LISTINGS_WRITE',
  'orders:write': 'RATE_LIMIT_ORDERS_WRITE',
  'transactions:write': 'RATE_LIMIT_TRANSACTIONS_WRITE',
  // Endpoint management is rare: the default budget (src/webhooks/).
  'webhooks:write': 'RATE_LIMIT_DEFAULT',
  // Watch management is rare too (the matches are the database's, not requests: src/watches/).
  'watches:write': 'RATE_LIMIT_DEFAULT',
  admin: 'RATE_LIMIT_ADMIN',
} as const satisfies Record<RateLimitBucket, keyof AuthConfig>;

export function bucketLimit(config: AuthConfig, bucket: RateLimitBucket): number {
  return config[LIMIT_VARIABLE[bucket]];
}

/**
 * Rate limit per client and scope bucket (runs after AccessGuard). Keyed by client id, never by IP:
 * one marketplace backend behind a NAT must not share its budget, and two keys never share one.
 * Sliding window of RATE_LIMIT_WINDOW_MS (blockDuration 0: a refused request does not count).
 * Public routes (no client) are not limited here. The budget is the whole service's: storage is in memory,
 * and each replica counts against its share of the budget, budget / live replicas (ReplicasService, read
 * from memory: no database round trip per request). X-RateLimit-Limit/Remaining are this replica's share.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AuthConfig,
    private readonly replicas: ReplicasService,
  ) {
    super(options, storage, reflector);
  }

  /**
   * The base guard's loop, for this app's one throttler without its per-request metadata lookups (five
   * reflector reads per throttler per request): budgets here come from the scope bucket (configuration),
   * never from `@Throttle`/`@SkipThrottle`, which no route uses. Headers, 429 and Retry-After as the
   * base guard's `handleRequest` (headers on every counted answer, Retry-After on a refusal).
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = this.request(context);
    const client = request.clientContext;
    if (!client) return true;
    const bucket = request.rateLimitBucket ?? 'default';
    const limit = this.replicas.share(bucketLimit(this.config, bucket));
    const key = `${bucket}:${client.id}`;
    const ttl = this.config.RATE_LIMIT_WINDOW_MS;
    const record = await this.storageService.increment(key, ttl, limit, 0, 'default');
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    if (record.isBlocked) {
      void reply.header('Retry-After', record.timeToBlockExpire);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker: client.id, ...record });
    }
    void reply.header(`${this.headerPrefix}-Limit`, limit);
    void reply.header(`${this.headerPrefix}-Remaining`, Math.max(0, limit - record.totalHits));
    void reply.header(`${this.headerPrefix}-Reset`, record.timeToExpire);
    return true;
  }

  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const windowSeconds = Math.round(this.config.RATE_LIMIT_WINDOW_MS / 1000);
    // The base guard sets X-RateLimit-* only on answers it lets through; a client backing off reads
    // them on the 429 too (names as on 200s: the default throttler has no suffix).
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    void reply.header(`${this.headerPrefix}-Limit`, detail.limit);
    void reply.header(`${this.headerPrefix}-Remaining`, 0);
    void reply.header(`${this.headerPrefix}-Reset`, Math.max(1, detail.timeToExpire));
    const bucket = this.bucket(context);
    throw new AppError(
      'RATE_LIMITED',
      `Rate limit exceeded: ${bucketLimit(this.config, bucket)} requests per ${windowSeconds} s for ${bucket} routes`,
      undefined,
      Math.max(1, detail.timeToBlockExpire),
    );
  }

  private request(context: ExecutionContext): FastifyRequest {
    return context.switchToHttp().getRequest<FastifyRequest>();
  }

  private bucket(context: ExecutionContext): RateLimitBucket {
    return this.request(context).rateLimitBucket ?? 'default';
  }
}
