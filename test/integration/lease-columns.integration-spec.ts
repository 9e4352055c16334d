import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { OrderEntity } from '../../src/checkout/order.entity';
import { LedgerTransactionEntity } from '../../src/transactions/ledger-transaction.entity';
import { LeaseColumns } from '../../src/durable-work/lease-columns';

describe(LeaseColumns.name, () => {
  it('maps lease_owner, lease_until and lease_token once into each leased table, as their migrations create them', async () => {
    const sut = new DataSource({ type: 'postgres', entities: [OrderEntity, LedgerTransactionEntity] });
    // Metadata only (no connection): what the entities declare.
    await (sut as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
    for (const table of ['orders', 'ledger_transactions']) {
      const metadata = sut.entityMetadatas.find((m) => m.tableName === table);
      const lease = metadata?.columns
        .filter((c) => c.databaseName.startsWith('lease_'))
        .map((c) => [c.databaseName, c.propertyName, String(c.type), c.isNullable]);
      expect(lease?.sort()).toEqual([
        ['lease_owner', 'leaseOwner', 'text', true],
        ['lease_token', 'leaseToken', 'bigint', true],
        ['lease_until', 'leaseUntil', 'timestamptz', true],
      ]);
    }
  });
});
