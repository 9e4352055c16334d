import type { INestApplication } from '@nestjs/common';
import {
  ApiResponse,
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type OperationObject,
} from '@nestjs/swagger';
import { ERROR_HTTP_STATUS } from './app-error';
import { SERVICE_VERSION } from './service-version';

/** The OpenAPI security scheme of the status page's session cookie (src/status/). */
export const STATUS_SESSION_SCHEME = 'status_session';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_HTTP_STATUS), example: 'VALIDATION_FAILED' },
        message: { type: 'string', example: 'Invalid request: limit' },
        details: {
          description:
            'VALIDATION_FAILED: one entry per offending field; FORBIDDEN: `{ requiredScope }`; ' +
            "SUBJECT_NOT_ALLOWED: `{ field }` naming the subject outside the key's binding; " +
            'SERVICE_UNAVAILABLE (readiness): the check report',
          example: [{ field: 'limit', problems: ['limit must not be greater than 500'] }],
        },
        requestId: { type: 'string', example: '9f0c5e0e-2b1a-4a51-9d3c-1f1f6f1f2a3b' },
      },
    },
  },
} as const;

const ERROR_RESPONSE_REF = { $ref: '#/components/schemas/ErrorResponse' };

/** Documents an error answer of one route (its status and when it happens) with the one error shape. */
export function ApiErrorResponse(status: number, description: string): MethodDecorator & ClassDecorator {
  return ApiResponse({ status, description, schema: ERROR_RESPONSE_REF });
}

/**
 * Errors every route can answer because of the global validation pipe, body parser and exception
 * filter rather than anything its controller declares; added to each operation they apply to.
 */
function addGlobalErrorResponses(operation: OperationObject): void {
  const add = (status: number, description: string): void => {
    operation.responses[status] ??= {
      description,
      content: { 'application/json': { schema: ERROR_RESPONSE_REF } },
    };
  };
  // Path ids are not validated into 400s: a malformed id is the same 404 as an unknown one.
  const validated = operation.parameters?.some((p) => 'in' in p && p.in !== 'path');
  if (validated || operation.requestBody) {
    add(400, 'VALIDATION_FAILED: `details` names every offending field (unknown fields included)');
  }
  if (operation.parameters?.some((p) => 'in' in p && p.in === 'path')) {
    add(414, 'URI_TOO_LONG: a path parameter is longer than 100 characters');
  }
  if (operation.requestBody) {
    add(408, 'REQUEST_TIMEOUT: the body did not arrive within HTTP_REQUEST_TIMEOUT_MS');
    add(413, 'PAYLOAD_TOO_LARGE: the body exceeds BODY_LIMIT_BYTES');
    add(415, 'UNSUPPORTED_MEDIA_TYPE: send application/json');
  }
  add(500, 'INTERNAL: an unexpected error (never with internals; quote the requestId)');
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Ticket resale BFF')
    .setDescription(
      'Marketplace API over the Ticket Resale Integration API v0.3.0. Every error response has the ' +
        'shape `ErrorResponse`; `x-request-id` is accepted and echoed on every response. Any route may ' +
        'also answer 400 (malformed HTTP, bad percent-escape, HTTP/1.1 without Host), 408 (headers or ' +
        'body too slow), 417 (an Expect other than 100-continue) or 431 (headers too large), in the same shape.',
    )
    .setVersion(SERVICE_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: `Authorization: Bearer <key>`' })
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'API key (alternative)' },
      'x-api-key',
    )
    .addCookieAuth(
      'bff_status_session',
      {
        type: 'apiKey',
        in: 'cookie',
        name: 'bff_status_session',
        description: "The status page's session cookie, set by POST /status/login (docs/status.md)",
      },
      STATUS_SESSION_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas.ErrorResponse = ERROR_SCHEMA as never;
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) addGlobalErrorResponses(operation);
    }
  }
  return document;
}

/** `GET /docs` (UI) and `GET /docs/openapi.json`, generated from the controllers and DTOs. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
}
