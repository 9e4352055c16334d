import { applyDecorators, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import {
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { AuthConfig } from '../config/auth.config';
import type { Scope } from './scopes';

/** Boolean AuthConfig switches a route can be opened by. */
export type PublicSwitch = 'METRICS_PUBLIC';

/**
 * Every route declares exactly one policy; the global AccessGuard enforces it and a test walks the
 * router and fails on any route without one. A route with none is refused (fail closed).
 */
export type AccessPolicy =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'scope'; scope: Scope }
  | { kind: 'public-if'; flag: PublicSwitch; otherwise: Scope };

export const ACCESS_POLICY = 'bff:access-policy';

const errorRef = { $ref: '#/components/schemas/ErrorResponse' };

function documented(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiSecurity('x-api-key'),
    ApiUnauthorizedResponse({ description: 'Missing, malformed, unknown or revoked key', schema: errorRef }),
    ApiTooManyRequestsResponse({
      description: 'Rate limit of this client exceeded (Retry-After)',
      schema: errorRef,
    }),
  );
}

/** No key needed (health probes). */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(ACCESS_POLICY, { kind: 'public' } satisfies AccessPolicy);
}

/** Any valid, unrevoked key (e.g. `GET /v1/me`). */
export function Authenticated(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_POLICY, { kind: 'authenticated' } satisfies AccessPolicy),
    documented(),
  );
}

/** A valid key holding `scope` (or `admin`, which implies every scope); else 403 naming the scope. */
export function RequireScope(scope: Scope): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_POLICY, { kind: 'scope', scope } satisfies AccessPolicy),
    documented(),
    ApiForbiddenResponse({ description: `The key lacks the ${scope} scope`, schema: errorRef }),
  );
}

/** Public when the AuthConfig switch is on, else requires `otherwise` (e.g. /metrics). */
export function PublicIf(flag: PublicSwitch, otherwise: Scope): MethodDecorator & ClassDecorator {
  return SetMetadata(ACCESS_POLICY, { kind: 'public-if', flag, otherwise } satisfies AccessPolicy);
}

/** The declared policy of a handler (method first, then its controller class); undefined if none. */
export function declaredPolicy(
  reflector: Reflector,
  // oxlint-disable-next-line typescript/no-unsafe-function-type -- Nest's handler and class refs
  handler: Function,
  // oxlint-disable-next-line typescript/no-unsafe-function-type
  controller: Function,
): AccessPolicy | undefined {
  return reflector.getAllAndOverride<AccessPolicy | undefined>(ACCESS_POLICY, [handler, controller]);
}

/** `public-if` resolved against configuration: what the guard actually enforces. */
export type EffectivePolicy = Exclude<AccessPolicy, { kind: 'public-if' }>;

export function effectivePolicy(policy: AccessPolicy, config: AuthConfig): EffectivePolicy {
  if (policy.kind !== 'public-if') return policy;
  return config[policy.flag] ? { kind: 'public' } : { kind: 'scope', scope: policy.otherwise };
}
