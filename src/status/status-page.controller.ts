import { applyDecorators, Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../auth/access.decorators';
import { AppError } from '../common/app-error';
import { ApiErrorResponse, STATUS_SESSION_SCHEME } from '../common/openapi';
import { UNAUTHORIZED_MESSAGE } from '../auth/auth.errors';
import { StatusLoginDto } from './dto/status-login.dto';
import { StatusAccess } from './status.access';
import { STATUS_CSS, STATUS_JS } from './status.assets';
import { renderLogin, renderPage, renderPanels } from './status.page';
import { StatusService } from './status.service';

const HTML = 'text/html; charset=utf-8';

/** The challenge on the page's 401s: an admin key as on the API (the login form turns it into the cookie). */
const CHALLENGE = 'Bearer realm="status"';

/**
 * What the page's credentialed routes accept, for OpenAPI (applied in reverse: the first listed is outermost):
 * the login's session cookie, or an admin key in either header; `open` adds "none" first (the route answers
 * without a credential too: the login form, a logout).
 */
function Credentials(open = false): MethodDecorator {
  return applyDecorators(
    ...(open ? [ApiSecurity({})] : []),
    ApiSecurity(STATUS_SESSION_SCHEME),
    ApiBearerAuth(),
    ApiSecurity('x-api-key'),
  );
}

/** Runs `fn`; a 401 from it leaves with `WWW-Authenticate`. */
async function challenged<T>(reply: FastifyReply, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHORIZED')
      void reply.header('www-authenticate', CHALLENGE);
    throw error;
  }
}

/**
 * The operator status page (docs/status.md): server-rendered HTML with hand-written SVG plots, its two assets and
 * its login. Public to the global guard: StatusAccess decides (admin key in a header, or the login's session
 * cookie). Documented in OpenAPI with the credentials each route accepts (the session cookie scheme, Bearer,
 * x-api-key; every 401 carries `WWW-Authenticate`); `GET /v1/admin/status` is the API.
 * Not mounted when the page is off (StatusModule.forRoot): its routes are then unknown routes.
 */
@ApiTags('status')
@ApiErrorResponse(404, 'NOT_FOUND: the page is off (outside the local demo without STATUS_PAGE_ENABLED=true)')
@Public()
@Controller('status')
export class StatusPageController {
  constructor(
    private readonly status: StatusService,
    private readonly access: StatusAccess,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getStatusPage',
    summary:
      'The operator status page (HTML): with an admin key in a header or the login cookie; else the login form',
  })
  @ApiOkResponse({
    description: 'The page, or the login form when no credential is presented',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiErrorResponse(401, 'UNAUTHORIZED: a key is presented in a header and is wrong or revoked')
  @ApiErrorResponse(403, 'FORBIDDEN: the key in the header lacks the admin scope')
  @ApiErrorResponse(429, 'RATE_LIMITED: too many failed authentications from this address (Retry-After)')
  @Credentials(true)
  async page(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    void reply.header('content-type', HTML).header('cache-control', 'no-store');
    if (!(await challenged(reply, () => this.access.allowed(request)))) return renderLogin();
    return renderPage(await this.status.report());
  }

  /** The panels alone, re-fetched by the page's script. */
  @Get('panels')
  @ApiOperation({
    operationId: 'getStatusPanels',
    summary: "The status page's panels (HTML fragment), for its refresh",
  })
  @ApiOkResponse({ description: 'The panels', content: { 'text/html': { schema: { type: 'string' } } } })
  @ApiErrorResponse(401, 'UNAUTHORIZED: no valid session cookie or admin key (the page shows the login form)')
  @ApiErrorResponse(403, 'FORBIDDEN: the key in the header lacks the admin scope')
  @ApiErrorResponse(429, 'RATE_LIMITED: too many failed authentications from this address (Retry-After)')
  @Credentials()
  async panels(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    await challenged(reply, async () => {
      if (!(await this.access.allowed(request))) throw new AppError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
    });
    void reply.header('content-type', HTML).header('cache-control', 'no-store');
    return renderPanels(await this.status.report());
  }

  @Get('assets/status.css')
  @ApiOperation({ operationId: 'getStatusStyle', summary: "The status page's style sheet" })
  @ApiOkResponse({ description: 'CSS', content: { 'text/css': { schema: { type: 'string' } } } })
  css(@Res({ passthrough: true }) reply: FastifyReply): string {
    void reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'no-cache');
    return STATUS_CSS;
  }

  @Get('assets/status.js')
  @ApiOperation({ operationId: 'getStatusScript', summary: "The status page's script (login, refresh)" })
  @ApiOkResponse({
    description: 'JavaScript',
    content: { 'text/javascript': { schema: { type: 'string' } } },
  })
  js(@Res({ passthrough: true }) reply: FastifyReply): string {
    void reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache');
    return STATUS_JS;
  }

  /** The key once, in a JSON body; answered with the session cookie (never the key) or 401/403. */
  @Post('login')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'statusLogin',
    summary:
      'Log in to the status page with an admin key: sets an HttpOnly SameSite=Strict session cookie (not the key)',
  })
  @ApiNoContentResponse({ description: 'Logged in; `Set-Cookie: bff_status_session=…`' })
  @ApiErrorResponse(401, 'UNAUTHORIZED: wrong or revoked key')
  @ApiErrorResponse(403, 'FORBIDDEN: the key lacks the admin scope')
  @ApiErrorResponse(429, 'RATE_LIMITED: too many failed authentications from this address (Retry-After)')
  async login(
    @Req() request: FastifyRequest,
    @Body() body: StatusLoginDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    void reply.header('set-cookie', await challenged(reply, () => this.access.login(body.key, request)));
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'statusLogout',
    summary: 'Log out of the status page: ends the session on every replica and clears the cookie',
  })
  @ApiNoContentResponse({ description: 'The session is ended and the cookie cleared' })
  @Credentials(true)
  async logout(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    void reply.header('set-cookie', await this.access.logout(request));
  }
}
