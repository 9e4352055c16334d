import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_HTTP_STATUS } from './app-error';

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
          description: 'For VALIDATION_FAILED: one entry per offending field',
          example: [{ field: 'limit', problems: ['limit must not be greater than 500'] }],
        },
        requestId: { type: 'string', example: '9f0c5e0e-2b1a-4a51-9d3c-1f1f6f1f2a3b' },
      },
    },
  },
} as const;

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Ticket resale BFF')
    .setDescription(
      'Marketplace API over the Ticket Resale Integration API v0.3.0. Every error response has the ' +
        'shape `ErrorResponse`; `x-request-id` is accepted and echoed on every response.',
    )
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: `Authorization: Bearer <key>`' })
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'API key (alternative)' },
      'x-api-key',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas.ErrorResponse = ERROR_SCHEMA as never;
  return document;
}

/** `GET /docs` (UI) and `GET /docs/openapi.json`, generated from the controllers and DTOs. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
}
