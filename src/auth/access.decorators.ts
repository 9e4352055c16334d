import { applyDecorators, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiErrorResponse } from '../common/openapi';
import type { AuthConfig } from '../config/auth.config';
import type { Scope } from './scopes';
import type { SubjectDeclaration } from './subject-binding';

/** Boolean AuthConfig switches a route can be opened by. */
export type PublicSwitch = 'METRICS_PUBLIC';

/**
 * Every route declares exactly one policy; the global AccessGuard enforces it and a test walks the
 * router and fails on any route without one. A route with none is refused (fail closed).
 */
export type AccessPolicy =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'scope'; scope: Scope; subject?: SubjectDeclaration }
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

function forbidden(scope: Scope, when = '', subject?: SubjectDeclaration): MethodDecorator & ClassDecorator {
  const bound = subject
    ? `; SUBJECT_NOT_ALLOWED: the key is bound to subjects and the ${subject.wallet} subject in ` +
      `${subject.in === 'path' ? 'path parameter' : 'body field'} \`${subject.field}\` is outside its ` +
      `binding (details: \`{ "field": "${subject.field}" }\`)`
    : '';
  return ApiErrorResponse(403, `FORBIDDEN: the key lacks the ${scope} scope${when}${bound}`);
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

/**
 * A valid key holding `scope` (or `admin`, which implies every scope); else 403 naming the scope.
 * `subject`: the route acts for the custodial wallet of the subject named there, so a key bound to
 * subjects must be bound to that one (else 403 SUBJECT_NOT_ALLOWED naming the field). Every route that
 * takes a subject declares it here; a test walks the OpenAPI document and fails on one that does not.
 */
export function RequireScope(scope: Scope, subject?: SubjectDeclaration): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_POLICY, {
      kind: 'scope',
      scope,
      ...(subject ? { subject } : {}),
    } satisfies AccessPolicy),
    documented(),
    forbidden(scope, '', subject),
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
  return config[policy.flag] === true ? { kind: 'public' } : { kind: 'scope', scope: policy.otherwise };
}
