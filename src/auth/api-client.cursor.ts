import type { CursorBinding, CursorValue } from '../common/keyset-cursor';
import { validationFailed } from '../common/validation';
import type { ListPosition } from './api-client.repository';
import type { ApiClientView } from './api-clients.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The admin key list: newest first, keys issued by one admin client (the cursor is bound to it). */
export function apiClientListBinding(createdBy: string): CursorBinding {
  return { sort: 'created_at_desc,id_desc', filters: { created_by: createdBy } };
}

/** Keyset position over (created_at DESC, id DESC): epoch milliseconds and id. */
export function apiClientPosition(view: ApiClientView): CursorValue[] {
  return [String(view.createdAt.getTime()), view.id];
}

/** The position a (signature-checked) cursor holds; anything else is the same 400 as a forged cursor. */
export function apiClientAfter(values: readonly CursorValue[]): ListPosition {
  const [ms, id, ...rest] = values;
  if (rest.length > 0 || !id || !UUID.test(id) || !/^\d{1,15}$/.test(ms ?? '')) {
    throw validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor for this query'] }]);
  }
  return { createdAt: new Date(Number(ms)), id };
}
