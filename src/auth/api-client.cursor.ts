import { validationFailed } from '../common/validation';
import type { ListPosition } from './api-client.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Opaque keyset cursor over (created_at DESC, id DESC): base64url of `<epoch ms>.<uuid>`. */
export function encodeApiClientCursor(position: ListPosition): string {
  return Buffer.from(`${position.createdAt.getTime()}.${position.id}`, 'utf8').toString('base64url');
}

export function decodeApiClientCursor(cursor: string): ListPosition {
  const [ms, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  const epoch = Number(ms);
  if (
    rest.length > 0 ||
    !id ||
    !UUID.test(id) ||
    !/^\d{1,15}$/.test(ms ?? '') ||
    !Number.isSafeInteger(epoch)
  ) {
    throw validationFailed([{ field: 'cursor', problems: ['cursor is not a valid cursor'] }]);
  }
  return { createdAt: new Date(epoch), id };
}
