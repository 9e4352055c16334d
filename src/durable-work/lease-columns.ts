import { Column } from 'typeorm';

/**
 * The lease columns of a table whose rows durable work claims (docs/durable-work.md "Leases and fencing tokens"):
 * who holds the row, until when (database clock) and under which fencing token (a fresh value of
 * `durable_work_token_seq` per claim, lease.sql.ts). Declared once here; the owning module's entity extends this
 * class (TypeORM concrete table inheritance: the columns belong to the entity's own table, nothing else is mapped),
 * and the table's own migration creates them (orders: …-CreateOrders and …-AddOrdersLeaseToken; ledger_transactions:
 * …-CreateLedgerTransactions and …-AddLedgerTransactionsLeaseToken).
 */
export abstract class LeaseColumns {
  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner: string | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  /** The fencing token of the current claim (lease.sql.ts); bigint as text. */
  @Column({ name: 'lease_token', type: 'bigint', nullable: true })
  leaseToken: string | null;
}
