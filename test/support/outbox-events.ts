import { newEventId, toJson } from '../../src/webhooks/outbox.repository';
import { EVENT_VERSIONS, type NewEvent } from '../../src/webhooks/webhook-events';

/** Anything that runs one parameterised statement: a TypeORM EntityManager (in a transaction) or a pg client. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** A statement and its parameters (for callers that inline it into a multi-statement simple query). */
export interface Statement {
  text: string;
  /** Strings only (the events as one JSON text), so a caller may quote them as literals. */
  values: string[];
}

/**
 * Events as the outbox triggers write them, for tests that need arbitrary events without driving an order, a
 * ledger transaction or a sync pass to the change that announces them: `outbox_append`, the SQL function every
 * outbox trigger calls (migrations/…-CreateOutboxTriggers.ts), once per event — the event and, in the same
 * statement, one delivery per matching enabled endpoint. One parameter (the events as a JSON array).
 */
export const APPEND_SQL = `SELECT outbox_append(x.id, x.type, x.version, x.client_id, x.data)
  FROM jsonb_to_recordset($1::jsonb) AS x(id text, type text, version smallint, client_id uuid, data jsonb)`;

/** The append statement of `events` with their new ids (`evt_…`, the `webhook-id`s), in order. */
export function appendStatement(events: readonly NewEvent[]): { statement: Statement; ids: string[] } {
  const ids = events.map(() => newEventId());
  const rows = events.map((event, i) => ({
    id: ids[i],
    type: event.type,
    version: EVENT_VERSIONS[event.type],
    client_id: event.clientId,
    data: event.data,
  }));
  return { statement: { text: APPEND_SQL, values: [toJson(rows)] }, ids };
}

/**
 * Appends `events` inside `db`'s transaction (an EntityManager of `dataSource.transaction(...)`, a query runner's
 * manager, or a pg client between BEGIN and COMMIT) as the triggers do; returns the new ids in order. bigint values
 * in `data` are written as decimal strings.
 */
export async function appendEvents(db: Queryable, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const { statement, ids } = appendStatement(events);
  await db.query(statement.text, statement.values);
  return ids;
}

/** An `order.created` event of `clientId` for order `order` (fixed buyer, listing and price). */
export const orderCreatedEvent = (clientId: string, order = 'o-1'): NewEvent => ({
  type: 'order.created',
  clientId,
  data: {
    order_id: order,
    state: 'created',
    buyer_subject: 'alice',
    event_id: '1',
    ticket_id: '2',
    expected_price_minor: '1500',
  },
});
