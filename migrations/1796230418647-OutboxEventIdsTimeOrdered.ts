import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * New event ids are time-ordered (issue 32, docs/webhooks.md "The outbox", docs/BENCHMARKS.md "Session 22"): `evt_`
 * and the 32 hex digits of a UUIDv7 (`uuidv7()`, PostgreSQL 18: 48 bits of milliseconds, 12 bits that keep one
 * backend's ids increasing within a millisecond, 62 random bits) instead of a random UUIDv4's. The same strings
 * (`length(id) = 36 AND id ~ '^evt_[0-9a-f]+$'`), still unique and unguessable enough for an id that grants nothing.
 *
 * Why: every event goes into `outbox_events_pkey` and, through its deliveries, into
 * `webhook_deliveries_event_endpoint_key (event_id, …)`. A random id lands on a random leaf of each index; a dense
 * pass (10,000 catalog events for 10 endpoints and 100,000 `watch.matched`) touches leaves all over both. Ids that
 * grow land on the rightmost leaf, which PostgreSQL's b-tree keeps cached for inserts (its fast path: no descent
 * from the root). Nothing reads an event's id as an order: the feed and pruning go by `(xact_id, position)`.
 *
 * Pings keep a random id written by the application (src/webhooks/outbox.repository.ts `newEventId`): one event
 * each, the format is the same.
 */
export class OutboxEventIdsTimeOrdered1796230418647 implements MigrationInterface {
  name = 'OutboxEventIdsTimeOrdered1796230418647';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION outbox_event_id() RETURNS text LANGUAGE sql VOLATILE AS $$
        SELECT 'evt_' || replace(uuidv7()::text, '-', '')
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION outbox_event_id() RETURNS text LANGUAGE sql VOLATILE AS $$
        SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '')
      $$`);
  }
}
