import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes of fair claims (src/durable-work/lease.sql.ts `claimFairSql`, docs/durable-work.md "Fair claims"):
 * per queue, one on (group, next_attempt_at) over the open rows — the loose index scan finds each group with one
 * probe and each group's oldest due rows with one range — and one on (group) over the rows leased now, so counting
 * what each group holds in flight reads only the leased rows (a handful), never the backlog. Orders are grouped by
 * client, webhook deliveries by endpoint (whose client is read from the endpoint).
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`), so orders and deliveries keep being written
 * while they build; a build that failed half-way leaves an invalid index that the next run drops first.
 */
const INDEXES: [name: string, definition: string][] = [
  ['orders_client_due_idx', `orders (client_id, next_attempt_at) WHERE recovery_point <> 'done'`],
  ['orders_client_held_idx', `orders (client_id) WHERE lease_owner IS NOT NULL AND recovery_point <> 'done'`],
  [
    'webhook_deliveries_endpoint_due_idx',
    `webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`,
  ],
  [
    'webhook_deliveries_endpoint_held_idx',
    `webhook_deliveries (endpoint_id) WHERE lease_owner IS NOT NULL AND status = 'pending'`,
  ],
];

export class CreateFairClaimIndexes1795829213016 implements MigrationInterface {
  name = 'CreateFairClaimIndexes1795829213016';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, definition] of INDEXES) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY ${name} ON ${definition}`);
    }
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): plain DROPs.
  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [name] of INDEXES) await queryRunner.query(`DROP INDEX ${name}`);
  }
}
