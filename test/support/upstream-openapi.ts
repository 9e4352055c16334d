import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface MediaType {
  schema: { $ref?: string; type?: string };
}
interface ResponseSpec {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface OperationSpec {
  responses: Record<string, ResponseSpec>;
  parameters?: { name: string; in: string }[];
}

/** The project's OpenAPI 3.1 description of the upstream API (written with the sandbox, checked by both sides). */
export const upstreamOpenApi = JSON.parse(
  readFileSync(join(__dirname, '../../openapi/upstream-api-v0.3.0.openapi.json'), 'utf8'),
) as {
  paths: Record<string, Record<string, OperationSpec>>;
  components: {
    schemas: Record<string, { required?: string[]; properties?: object; enum?: unknown[] }>;
    responses: Record<string, ResponseSpec>;
  };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(upstreamOpenApi, 'upstream.json');

/** The compiled validator of a named component schema (compiled once by ajv, then cached). */
export function upstreamSchema(name: string): ValidateFunction {
  const validate =
    name in upstreamOpenApi.components.schemas
      ? ajv.getSchema(`upstream.json#/components/schemas/${name}`)
      : undefined;
  if (validate === undefined) throw new Error(`schema ${name} missing from the OpenAPI description`);
  return validate;
}

/** Violations of a named component schema by `data` ([] when valid). */
export function schemaErrors(name: string, data: unknown): unknown[] {
  const validate = upstreamSchema(name);
  return validate(data) ? [] : [...(validate.errors ?? ['invalid'])];
}
