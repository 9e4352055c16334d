import { Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/app-error';
import { AuthConfig } from '../config/auth.config';
import { declaredPolicy, effectivePolicy, type EffectivePolicy } from './access.decorators';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { UNAUTHORIZED_MESSAGE } from './auth.errors';
import type { AuthFailureReason } from './api-clients.service';
import { presentedKey } from './authenticated-request';
import { FailedAuthLimiter } from './failed-auth.limiter';
import { grants } from './scopes';
import { assertSubjectAllowed } from './subject-binding';

/**
 * Global guard (APP_GUARD): every controller route is public, key-only or scope-protected by its
 * declaration (`@Public`, `@Authenticated`, `@RequireScope`, `@PublicIf`). A route without one is
 * refused after authentication (fail closed) and logged as a bug. A scope route that declares the subject
 * it acts for also refuses a key bound to other subjects (subject-binding.ts).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger('AccessGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly config: AuthConfig,
    private readonly failures: FailedAuthLimiter,
  ) {}

  /** Effective policy per (handler, controller): metadata and configuration are fixed after bootstrap. */
  // oxlint-disable-next-line typescript/no-unsafe-function-type -- Nest's handler and class refs
  private readonly policies = new WeakMap<Function, WeakMap<Function, EffectivePolicy | null>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = this.policyOf(context);
    if (policy?.kind === 'public') return true;

    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    // An address past its failed-authentication budget is refused before its credential is looked at.
    this.failures.assertAllowed(request.ip);
    const presented = presentedKey(request.headers, request.raw.rawHeaders);
    if (presented === undefined) this.refuse(request, http.getResponse<FastifyReply>(), 'missing');
    if (presented === null) this.refuse(request, http.getResponse<FastifyReply>(), 'malformed');
    const result = await this.authenticator.authenticate(presented, request.raw.socket);
    if (!result.ok) this.refuse(request, http.getResponse<FastifyReply>(), result.reason);

    const client = result.client;
    request.apiClient = { id: client.id, name: client.name };
    request.clientContext = client;
    if (!policy) {
      this.logger.error(
        { requestId: request.id, route: request.routeOptions?.url },
        'route has no access declaration; refused',
      );
      throw new AppError('FORBIDDEN', 'This route is not available to API clients');
    }
    if (policy.kind === 'scope' && !grants(client.scopes, policy.scope)) {
      throw new AppError('FORBIDDEN', `This API key lacks the required scope: ${policy.scope}`, {
        requiredScope: policy.scope,
      });
    }
    if (policy.kind === 'scope' && policy.subject)
      assertSubjectAllowed(client.binding, policy.subject, request);
    request.rateLimitBucket = policy.kind === 'scope' ? policy.scope : 'default';
    return true;
  }

  private policyOf(context: ExecutionContext): EffectivePolicy | undefined {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byController = this.policies.get(handler);
    if (!byController) this.policies.set(handler, (byController = new WeakMap()));
    let policy = byController.get(controller);
    if (policy === undefined) {
      const declared = declaredPolicy(this.reflector, handler, controller);
      policy = declared ? effectivePolicy(declared, this.config) : null;
      byController.set(controller, policy);
    }
    return policy ?? undefined;
  }

  private refuse(request: FastifyRequest, reply: FastifyReply, reason: AuthFailureReason): never {
    this.logger.log({ requestId: request.id, reason }, 'authentication failed');
    // No credential at all is not a guess (a probe, a misconfigured client): only presented ones count.
    if (reason !== 'missing') this.failures.recordFailure(request.ip);
    void reply.header('www-authenticate', 'Bearer');
    throw new AppError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
  }
}
