import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_append_set(type, version, clients, data)`: `outbox_append` (…-CreateOutboxTriggers.ts) for many events
 * of one type in one statement — the events in array order (so their feed order is the caller's), and one delivery
 * per matching enabled endpoint of each event's owner, by the same filter as `outbox_append` (the owner's endpoints
 * whose `event_types` is empty or names the type; an operator event's: endpoints of admin keys). Returns how many
 * events it inserted.
 *
 * Why (issue 32, docs/BENCHMARKS.md "Session 17: catalog cost"): the watch match announced each `watch.matched` by
 * one `outbox_append` call, two statements per event run one event at a time; a pass whose 10,000 price drops
 * matched 100,000 watches spent most of its extra time in those calls. Set-based, the batch's events are one INSERT
 * and their deliveries one more, in the matching statement's transaction as before.
 */
export class CreateOutboxAppendSet1795850117303 implements MigrationInterface {
  name = 'CreateOutboxAppendSet1795850117303';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION outbox_append_set(p_type text, p_version smallint, p_clients uuid[], p_data jsonb[])
      RETURNS bigint LANGUAGE sql AS $$
        WITH ev AS (
          INSERT INTO outbox_events (id, type, version, client_id, payload)
          SELECT outbox_event_id(), p_type, p_version, x.client_id, x.data
          FROM unnest(p_clients, p_data) WITH ORDINALITY AS x(client_id, data, n)
          ORDER BY x.n
          RETURNING id, client_id),
        delivered AS (
          INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
          SELECT e.id, ev.id, clock_timestamp()
          FROM ev JOIN webhook_endpoints e ON e.enabled
            AND (e.client_id = ev.client_id OR (ev.client_id IS NULL AND e.operator_events))
            AND (cardinality(e.event_types) = 0 OR p_type = ANY (e.event_types)))
        SELECT count(*) FROM ev
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION outbox_append_set(text, smallint, uuid[], jsonb[])`);
  }
}
