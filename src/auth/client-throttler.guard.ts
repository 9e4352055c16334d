import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/app-error';
import { AuthConfig } from '../config/auth.config';
import type { RateLimitBucket } from './authenticated-request';

/** Per-window request budget of each bucket, from configuration. */
const LIMIT_VARIABLE = {
  default: 'RATE_LIMIT_DEFAULT',
  'catalog:read': 'RATE_LIMIT_CATALOG_READ',
  'listings:write': 'RATE_LIMIT_LISTINGS_WRITE',
  'orders:write': 'RATE_LIMIT_ORDERS_WRITE',
  'transactions:write': 'RATE_LIMIT_TRANSACTIONS_WRITE',
  admin: 'RATE_LIMIT_ADMIN',
} as const satisfies Record<RateLimitBucket, keyof AuthConfig>;

export function bucketLimit(config: AuthConfig, bucket: RateLimitBucket): number {
  return config[LIMIT_VARIABLE[bucket]];
}

/**
 * Rate limit per client and scope bucket (runs after AccessGuard). Keyed by client id, never by IP:
 * one marketplace backend behind a NAT must not share its budget, and two keys never share one.
 * Sliding window of RATE_LIMIT_WINDOW_MS (blockDuration 0: a refused request does not count).
 * Public routes (no client) are not limited here. Storage is in memory, i.e. per replica.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AuthConfig,
  ) {
    super(options, storage, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return !this.request(context).clientContext;
  }

  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    return (req as unknown as FastifyRequest).clientContext?.id ?? 'anonymous';
  }

  protected override generateKey(context: ExecutionContext, tracker: string): string {
    return `${this.bucket(context)}:${tracker}`;
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const limit = bucketLimit(this.config, this.bucket(props.context));
    return super.handleRequest({ ...props, limit });
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
    throw new AppError(
      'RATE_LIMITED',
      `Rate limit exceeded: ${detail.limit} requests per ${windowSeconds} s for ${this.bucket(context)} routes`,
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
