import { createHmac, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiClientsService } from '../auth/api-clients.service';
import { presentedKey } from '../auth/authenticated-request';
import { FailedAuthLimiter } from '../auth/failed-auth.limiter';
import { UNAUTHORIZED_MESSAGE } from '../auth/auth.errors';
import { grants } from '../auth/scopes';
import { AppError } from '../common/app-error';
import { AppConfig } from '../config/app.config';
import { AuthConfig } from '../config/auth.config';
import { StatusSessionRepository } from './status-session.repository';
import { cookieValue, sessionCookie, signSession, verifySession } from './status.session';

/**
 * Who may see the status page (docs/status.md "Access"): an admin key in `Authorization: Bearer` or `x-api-key`,
 * or the session cookie a login with an admin key set. The cookie is an HMAC-signed session (client id, expiry,
 * session id) under a secret derived from API_KEY_PEPPER, never the key; each use re-reads the client and the
 * session's row (status_sessions), so a revoked or demoted key's sessions, and a logged-out one, end at once on
 * every replica. Failed keys count against the address's failed-authentication budget (FailedAuthLimiter), login
 * included. (Outside the local demo without STATUS_PAGE_ENABLED=true the page's routes are not mounted:
 * StatusModule.forRoot.)
 */
@Injectable()
export class StatusAccess {
  private readonly logger = new Logger('StatusAccess');
  private readonly secret: string;

  constructor(
    private readonly clients: ApiClientsService,
    private readonly config: AppConfig,
    auth: AuthConfig,
    private readonly sessions: StatusSessionRepository,
    private readonly failures: FailedAuthLimiter,
  ) {
    this.secret = createHmac('sha256', auth.pepper).update('status-page-session-v1').digest('base64');
  }

  /**
   * Whether the request may see the page: true with an admin key or a valid session; false with no credential at
   * all (the caller shows the login form or answers 401). A key that is presented but wrong is a 401, a valid
   * key without the admin scope a 403, as on every admin route. `Authorization: Basic …` alone is a proxy's own
   * login in front of the page (a browser sends it on every request), not a key: the session cookie decides.
   */
  async allowed(request: FastifyRequest): Promise<boolean> {
    const presented = presentedKey(request.headers, request.raw.rawHeaders);
    if (presented !== undefined && !(presented === null && proxyBasicAuth(request.headers))) {
      await this.adminClient(presented, request);
      return true;
    }
    const token = cookieValue(request.headers.cookie);
    if (token === undefined) return false;
    const session = verifySession(this.secret, token, Date.now());
    if (!session) return false;
    if (!(await this.sessions.isActive(session.sessionId, session.clientId))) return false;
    const client = await this.clients.get(session.clientId);
    return client !== null && client.revokedAt === null && grants(client.scopes, 'admin');
  }

  /** The Set-Cookie of a login with `key` (401 wrong or revoked key, 403 not an admin key, 429 over budget). */
  async login(key: string, request: FastifyRequest): Promise<string> {
    const clientId = await this.adminClient(key, request);
    const ttl = this.config.STATUS_SESSION_TTL_MS;
    const sessionId = randomUUID();
    await this.sessions.open(sessionId, clientId, ttl);
    this.logger.log({ requestId: request.id, clientId }, 'status page login');
    return sessionCookie(
      signSession(this.secret, clientId, Date.now() + ttl, sessionId),
      ttl,
      !this.config.localDemo,
    );
  }

  /** Ends the request's session on every replica (when it carries a valid one); the Set-Cookie that clears it. */
  async logout(request: FastifyRequest): Promise<string> {
    const token = cookieValue(request.headers.cookie);
    const session = token === undefined ? null : verifySession(this.secret, token, Date.now());
    if (session) await this.sessions.end(session.sessionId);
    return sessionCookie('', 0, !this.config.localDemo);
  }

  private async adminClient(presented: string | null, request: FastifyRequest): Promise<string> {
    const requestId = request.id;
    this.failures.assertAllowed(request.ip);
    const result = presented === null ? null : await this.clients.verify(presented);
    if (!result?.ok) {
      this.failures.recordFailure(request.ip);
      this.logger.log(
        { requestId, reason: result?.reason ?? 'malformed' },
        'status page authentication failed',
      );
      throw new AppError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
    }
    if (!grants(result.client.scopes, 'admin')) {
      throw new AppError('FORBIDDEN', 'This API key lacks the required scope: admin', {
        requiredScope: 'admin',
      });
    }
    return result.client.id;
  }
}

/** `Authorization: Basic …` and no x-api-key: a reverse proxy's login, never an API key of ours. */
function proxyBasicAuth(headers: FastifyRequest['headers']): boolean {
  const authorization = headers.authorization;
  return (
    typeof authorization === 'string' && /^Basic /i.test(authorization) && headers['x-api-key'] === undefined
  );
}
