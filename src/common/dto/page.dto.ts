import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, getSchemaPath } from '@nestjs/swagger';

/** One page of a keyset-paginated list. */
export interface Page<T> {
  items: T[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null;
}

export const NEXT_CURSOR_DESCRIPTION =
  'Opaque cursor: pass as `cursor` (with the same filters) for the next page; null on the last page';

/**
 * Documents a 200 answer of `Page<item>` in the OpenAPI description (generic classes cannot carry
 * decorators, so the schema is written out once here): `@ApiOkPage(ListingResponseDto)`.
 */
export function ApiOkPage(item: Type<unknown>, description?: string): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(item),
    ApiOkResponse({
      description,
      schema: {
        type: 'object',
        required: ['items', 'next_cursor'],
        properties: {
          items: { type: 'array', items: { $ref: getSchemaPath(item) } },
          next_cursor: {
            type: 'string',
            nullable: true,
            description: NEXT_CURSOR_DESCRIPTION,
            example: null,
          },
        },
      },
    }),
  );
}
