import { Injectable } from '@nestjs/common';
import { appendStatement, OutboxRepository, type Queryable, type Statement } from './outbox.repository';
import type { NewEvent } from './webhook-events';

/**
 * What other modules call (docs/webhooks.md): announce events in the transaction that makes them true. The
 * outbox row and its deliveries commit or roll back with the caller's change; never append after a commit or
 * from a log. Delivery (signed, retried, at least once) and the catch-up feed take it from there.
 */
@Injectable()
export class WebhooksService {
  constructor(private readonly outbox: OutboxRepository) {}

  /**
   * Appends `events` inside `db`'s transaction (a TypeORM EntityManager of `dataSource.transaction(...)`, a query
   * runner's manager, or a pg client between BEGIN and COMMIT): one INSERT of every event plus, in the same
   * statement, one delivery per matching enabled endpoint. Returns the event ids (`evt_…`, the `webhook-id`s) in
   * order. bigint values in `data` are written as decimal strings.
   */
  append(db: Queryable, events: readonly NewEvent[]): Promise<string[]> {
    return this.outbox.append(db, events);
  }

  /**
   * The same append as a statement (text + string parameters) for a caller that batches its own statements, e.g.
   * a multi-statement simple query with the values inlined as literals. Run it in the caller's transaction.
   */
  appendStatement(events: readonly NewEvent[]): { statement: Statement; ids: string[] } {
    return appendStatement(events);
  }
}
