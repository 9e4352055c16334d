import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The catalog fan-out (`catalog_append`, …-CreateCatalogEvents.ts), one statement per batch of changes with the
 * subscription matched once (issue 32, docs/webhooks.md "Catalog events"). The first version looked the
 * subscribers up per change (a lateral query of the endpoints, de-duplicated per change) and matched every written
 * event against the endpoints a second time for its deliveries. Now the enabled endpoints are read once, each
 * (change, endpoint) pair is matched once, the event ids are drawn per (change, client) before either insert, and
 * the events and their deliveries are two inserts of that one set. Same rows as before: one event per change and
 * subscribed client, in the batch's order; one delivery per enabled endpoint of that client whose filters take it.
 */
const FAN_OUT_ONCE = `
  CREATE OR REPLACE FUNCTION catalog_append(p_changes jsonb) RETURNS void LANGUAGE sql AS $$
    WITH c AS (
      SELECT x.ord, x.type, x.event_id, x.data
      FROM ROWS FROM (jsonb_to_recordset(p_changes) AS (type text, event_id numeric, data jsonb))
        WITH ORDINALITY AS x(type, event_id, data, ord)
    ), e AS MATERIALIZED (
      SELECT id, client_id, event_types, event_ids FROM webhook_endpoints WHERE enabled
    ), m AS MATERIALIZED (
      SELECT c.ord, c.type, c.data, e.id AS endpoint_id, e.client_id
      FROM c JOIN e ON catalog_endpoint_wants(e.event_types, e.event_ids, c.type, c.event_id)
    ), k AS MATERIALIZED (
      SELECT outbox_event_id() AS id, g.ord, g.client_id, g.type, g.data
      FROM (SELECT DISTINCT ON (m.ord, m.client_id) m.ord, m.client_id, m.type, m.data
            FROM m ORDER BY m.ord, m.client_id) g
    ), ev AS (
      INSERT INTO outbox_events (id, type, version, client_id, payload)
      SELECT k.id, k.type, 1::smallint, k.client_id, k.data FROM k ORDER BY k.ord, k.client_id
    )
    INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
    SELECT m.endpoint_id, k.id, clock_timestamp()
    FROM m JOIN k ON k.ord = m.ord AND k.client_id = m.client_id
    ORDER BY m.endpoint_id, k.ord
  $$`;

// The version of …-CreateCatalogEvents.ts, restored by down().
const PER_CHANGE = `
  CREATE OR REPLACE FUNCTION catalog_append(p_changes jsonb) RETURNS void LANGUAGE sql AS $$
    WITH c AS (
      SELECT x.type, x.event_id, x.data FROM jsonb_to_recordset(p_changes) AS x(type text, event_id numeric, data jsonb)
    ), ev AS (
      INSERT INTO outbox_events (id, type, version, client_id, payload)
      SELECT outbox_event_id(), c.type, 1::smallint, s.client_id, c.data
      FROM c CROSS JOIN LATERAL catalog_subscribers(c.type, c.event_id) AS s(client_id)
      RETURNING id, type, client_id, (payload ->> 'event_id')::numeric AS event_id)
    INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
    SELECT e.id, ev.id, clock_timestamp()
    FROM ev JOIN webhook_endpoints e ON e.enabled AND e.client_id = ev.client_id
      AND catalog_endpoint_wants(e.event_types, e.event_ids, ev.type, ev.event_id)
  $$`;

export class CatalogFanOutOnce1795841037915 implements MigrationInterface {
  name = 'CatalogFanOutOnce1795841037915';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(FAN_OUT_ONCE);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(PER_CHANGE);
  }
}
