import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Append-only audit of checkout orders (owned by `checkout/`): one row per committed step, written in the
 * same statement as the order's state change, so the audit and the order can never disagree. Rows are never
 * updated or deleted (a trigger refuses it).
 */
export class CreateOrderSteps1795357340634 implements MigrationInterface {
  name = 'CreateOrderSteps1795357340634';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE order_steps (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        order_id uuid NOT NULL REFERENCES orders (id),
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        attempt integer NOT NULL,
        step text NOT NULL,
        state text NOT NULL,
        recovery_point text NOT NULL,
        detail text NULL,
        actor text NOT NULL,
        request_id text NULL
      )
    `);
    await queryRunner.query(`CREATE INDEX order_steps_order_idx ON order_steps (order_id, id)`);
    await queryRunner.query(`
      CREATE FUNCTION order_steps_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'order_steps is append-only'; END $$
    `);
    await queryRunner.query(`
      CREATE TRIGGER order_steps_append_only BEFORE UPDATE OR DELETE ON order_steps
      FOR EACH ROW EXECUTE FUNCTION order_steps_append_only()
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE order_steps`);
    await queryRunner.query(`DROP FUNCTION order_steps_append_only()`);
  }
}
