import { applyDecorators, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiErrorResponse } from '../common/openapi';
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

/** The key headers and the answers every keyed route can give; `when` qualifies them (e.g. /metrics). */
function documented(when = ''): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiSecurity('x-api-key'),
    ApiErrorResponse(401, `UNAUTHORIZED: missing, malformed, unknown or revoked key${when}`),
    ApiErrorResponse(
      429,
      `RATE_LIMITED: this client's budget for the route's scope is spent (Retry-After)${when}`,
    ),
  );
}

function forbidden(scope: Scope, when = ''): MethodDecorator & ClassDecorator {
  return ApiErrorResponse(403, `FORBIDDEN: the key lacks the ${scope} scope${when}`);
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
    forbidden(scope),
  );
}

/** Public when the AuthConfig switch is on, else requires `otherwise` (e.g. /metrics). */
export function PublicIf(flag: PublicSwitch, otherwise: Scope): MethodDecorator & ClassDecorator {
  const when = ` (only when ${flag}=false)`;
  return applyDecorators(
    SetMetadata(ACCESS_POLICY, { kind: 'public-if', flag, otherwise } satisfies AccessPolicy),
    // `{}` first: no key is needed by default; a key with `otherwise` when the switch is off.
    ApiSecurity({}),
    documented(when),
    forbidden(otherwise, when),
  );
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
