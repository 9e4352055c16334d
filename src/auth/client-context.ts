import { AppError } from '../common/app-error';
import type { Scope } from './scopes';
import type { SubjectBinding } from './subject-binding';

/** The authenticated caller, attached to the request by the access guard. */
export interface ClientContext {
  id: string;
  name: string;
  scopes: Scope[];
  /** The subjects the key may act for; null: unbound (any subject). */
  binding: SubjectBinding | null;
}

/** Anything stored on behalf of a client: orders, transaction records, idempotency keys, keys. */
export interface OwnedRecord {
  /** The `api_clients.id` of the client that created the record. */
  clientId: string;
}

/**
 * Object-level access rule: a record is visible only to the client that created it. Anyone else
 * gets the same 404 as for a record that does not exist (existence is not revealed); `admin` does
 * not override ownership. Prefer filtering by client id in the query itself (`WHERE client_id = $1`);
 * call this on every record loaded by id before returning or acting on it.
 */
export function assertOwnedBy<T extends OwnedRecord>(
  record: T | null | undefined,
  client: Pick<ClientContext, 'id'>,
  what = 'Resource',
): T {
  if (!record || record.clientId !== client.id) throw new AppError('NOT_FOUND', `${what} not found`);
  return record;
}
