import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C traceparent of the request that created an order (docs/tracing.md), written only when tracing is on:
 * a drive resumed by the recovery worker (a retry, a crash, another replica) starts a new trace linked to it.
 * A table of its own rather than a column of `orders`: the checkout's prepared statements read `orders` with
 * `SELECT *` / `RETURNING *`, and a new column would fail them on replicas still running the previous version
 * during a rolling deploy ("cached plan must not change result type"). Owned by checkout; rows go with their
 * order.
 */
export class CreateOrderTraces1795754004140 implements MigrationInterface {
  name = 'CreateOrderTraces1795754004140';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE order_traces (
         order_id uuid PRIMARY KEY REFERENCES orders (id) ON DELETE CASCADE,
         traceparent text NOT NULL CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
         created_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE order_traces`);
  }
}
