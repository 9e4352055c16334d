import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The catalog change types (docs/webhooks.md "Catalog events"); each needs a subscription to the event id. */
const CATALOG_TYPES = `ARRAY['listing.listed', 'listing.price_changed', 'listing.removed',
  'event.listed', 'event.updated', 'event.removed']::text[]`;

/**
 * Catalog change events (issue 32 items 1–2, docs/webhooks.md "Catalog events"): the mirror's own writes announce
 * themselves, like orders do (…-CreateOutboxTriggers.ts), through STATEMENT-level AFTER triggers with transition
 * tables on `listings` and `events`: set-based (one INSERT of events and deliveries per written batch, in the
 * statement's own transaction), and on every write path (a full pass's merge and sweep, a per-event walk, a live
 * observation of checkout or the sampler, a test's SQL) without one line in the writers.
 *
 * No fan-out to nobody: a catalog event row is written per (change, subscribed client) only. A client subscribes
 * through an enabled endpoint whose `event_ids` (new column, ≤ 100 u64 values) names the event — or, for an
 * endpoint without `event_ids`, whose `event_types` names the catalog type explicitly (every event). An endpoint
 * without either (the default, `event_types` empty = every type) gets no catalog event.
 *
 * The hooks another subscription kind (watches, issue 32 item 3) extends — `CREATE OR REPLACE` both with
 * `UNION` of its own rows:
 * - `catalog_wanted_event_ids()`: the event ids anyone wants (NULL: every event, '{}': none) — the per-statement
 *   gate: a pass with no subscriber pays one probe of the endpoints per batch, nothing per row;
 * - `catalog_subscribers(type, event_id)`: the clients that want that change (the feed's owners).
 *
 * A full pass into an empty mirror, or the first after the database's epoch changed (a restore, a failover, a
 * restart), sets `bff.catalog_backfill` for its transactions: the triggers then emit nothing, and the pass's end
 * appends one `sync.backfill_completed` (`catalog_backfill_completed`).
 *
 * `listing.removed`'s reason is found at the write from this service's own records of the ticket since the listing
 * was (re)listed: an order of it that was submitted or confirmed → `sold`; a cancel_listing_v1 transaction of it
 * that was submitted and did not fail → `cancelled`; else `gone_upstream`. A lookup rather than a setting of the
 * writer: whichever writer observes the removal first (the order's refresh walk, a hot walk, a full pass, the
 * sampler) names the same reason.
 */
export class CreateCatalogEvents1795841037912 implements MigrationInterface {
  name = 'CreateCatalogEvents1795841037912';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_endpoints ADD COLUMN event_ids numeric(20,0)[] NOT NULL DEFAULT '{}'
        CHECK (cardinality(event_ids) <= 100)`);
    // The epoch (pg_postmaster_start_time) under which the last full pass of each resource completed.
    await queryRunner.query(`
      ALTER TABLE mirror_generation ADD COLUMN listings_epoch text NULL, ADD COLUMN events_epoch text NULL`);

    await queryRunner.query(`
      CREATE FUNCTION catalog_endpoint_wants(p_event_types text[], p_event_ids numeric[], p_type text,
        p_event_id numeric) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN cardinality(p_event_ids) = 0 THEN p_type = ANY (p_event_types)
                    ELSE p_event_id = ANY (p_event_ids)
                         AND (cardinality(p_event_types) = 0 OR p_type = ANY (p_event_types)) END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION catalog_wanted_event_ids() RETURNS numeric[] LANGUAGE sql STABLE AS $$
        SELECT CASE
          WHEN coalesce(current_setting('bff.catalog_backfill', true), '') = 'on' THEN '{}'::numeric[]
          WHEN EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.enabled AND cardinality(e.event_ids) = 0
                         AND e.event_types && ${CATALOG_TYPES}) THEN NULL
          ELSE coalesce((SELECT array_agg(DISTINCT x) FROM webhook_endpoints e, unnest(e.event_ids) x
                         WHERE e.enabled AND cardinality(e.event_ids) > 0), '{}'::numeric[]) END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION catalog_subscribers(p_type text, p_event_id numeric) RETURNS SETOF uuid
      LANGUAGE sql STABLE AS $$
        SELECT DISTINCT e.client_id FROM webhook_endpoints e
        WHERE e.enabled AND catalog_endpoint_wants(e.event_types, e.event_ids, p_type, p_event_id)
      $$`);
    // Money as orders show it: exact minor units, and the amount in stablecoin units when the decimals are known.
    await queryRunner.query(`
      CREATE FUNCTION catalog_money(p_minor numeric, p_decimals int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN p_minor IS NULL THEN NULL ELSE jsonb_build_object(
          'minor', p_minor::text,
          'amount', CASE WHEN p_decimals IS NULL THEN NULL WHEN p_decimals = 0 THEN p_minor::text
            ELSE rtrim(rtrim(
              left(lpad(p_minor::text, greatest(length(p_minor::text), p_decimals + 1), '0'), -p_decimals) || '.'
              || right(lpad(p_minor::text, greatest(length(p_minor::text), p_decimals + 1), '0'), p_decimals),
              '0'), '.') END,
          'decimals', p_decimals) END
      $$`);
    // The one fan-out of catalog changes: [{type, event_id, data}] → one event per subscribed client, and one
    // delivery per enabled endpoint of that client whose filters take it.
    await queryRunner.query(`
      CREATE FUNCTION catalog_append(p_changes jsonb) RETURNS void LANGUAGE sql AS $$
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
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION catalog_removal_reason(p_event_id numeric, p_ticket_id numeric, p_since timestamptz)
      RETURNS text LANGUAGE sql STABLE AS $$
        SELECT CASE
          WHEN EXISTS (SELECT 1 FROM orders o WHERE o.event_id = p_event_id AND o.ticket_id = p_ticket_id
                         AND o.state IN ('submitted', 'confirmed') AND o.created_at >= p_since) THEN 'sold'
          WHEN EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.instruction = 'cancel_listing_v1'
                         AND t.request -> 'platformInstructions' -> 'params'
                             @> jsonb_build_array(jsonb_build_object('event_id', p_event_id::text,
                                                                     'ticket_id', p_ticket_id::text))
                         AND t.phase = 'signed' AND t.tracking_stopped IS NULL
                         AND (t.status IS NULL OR t.status IN ('processing', 'confirmed'))
                         AND t.created_at >= p_since) THEN 'cancelled'
          ELSE 'gone_upstream' END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION catalog_listing_events() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        wanted numeric[] := catalog_wanted_event_ids();
        decimals int;
        changes jsonb;
      BEGIN
        IF wanted IS NOT NULL AND cardinality(wanted) = 0 THEN RETURN NULL; END IF;
        decimals := (SELECT stablecoin_decimals FROM protocol_config);
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(jsonb_build_object('type', 'listing.listed', 'event_id', n.event_id,
                   'data', jsonb_build_object('event_id', n.event_id::text, 'ticket_id', n.ticket_id::text,
                     'price_minor', n.ask_price_minor::text, 'price', catalog_money(n.ask_price_minor, decimals),
                     'expires_at', n.expires_at::text)))
            INTO changes
          FROM new_rows n WHERE n.removed_at IS NULL AND (wanted IS NULL OR n.event_id = ANY (wanted));
        ELSE
          SELECT jsonb_agg(CASE
              WHEN o.removed_at IS NOT NULL THEN jsonb_build_object('type', 'listing.listed', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'ticket_id', n.ticket_id::text,
                  'price_minor', n.ask_price_minor::text, 'price', catalog_money(n.ask_price_minor, decimals),
                  'expires_at', n.expires_at::text))
              WHEN n.removed_at IS NOT NULL THEN jsonb_build_object('type', 'listing.removed', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'ticket_id', n.ticket_id::text,
                  'reason', catalog_removal_reason(n.event_id, n.ticket_id, o.first_seen_at),
                  'price_minor', o.ask_price_minor::text, 'price', catalog_money(o.ask_price_minor, decimals)))
              ELSE jsonb_build_object('type', 'listing.price_changed', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'ticket_id', n.ticket_id::text,
                  'previous_price_minor', o.ask_price_minor::text, 'price_minor', n.ask_price_minor::text,
                  'previous_price', catalog_money(o.ask_price_minor, decimals),
                  'price', catalog_money(n.ask_price_minor, decimals))) END)
            INTO changes
          FROM old_rows o JOIN new_rows n ON n.event_id = o.event_id AND n.ticket_id = o.ticket_id
          WHERE (wanted IS NULL OR n.event_id = ANY (wanted))
            AND ((o.removed_at IS NOT NULL AND n.removed_at IS NULL)
              OR (o.removed_at IS NULL AND n.removed_at IS NOT NULL)
              OR (o.removed_at IS NULL AND n.removed_at IS NULL AND o.ask_price_minor <> n.ask_price_minor));
        END IF;
        IF changes IS NOT NULL THEN PERFORM catalog_append(changes); END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER listings_catalog_inserted AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION catalog_listing_events()`);
    await queryRunner.query(`
      CREATE TRIGGER listings_catalog_updated AFTER UPDATE ON listings
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION catalog_listing_events()`);
    await queryRunner.query(`
      CREATE FUNCTION catalog_event_events() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        wanted numeric[] := catalog_wanted_event_ids();
        changes jsonb;
      BEGIN
        IF wanted IS NOT NULL AND cardinality(wanted) = 0 THEN RETURN NULL; END IF;
        IF TG_OP = 'INSERT' THEN
          SELECT jsonb_agg(jsonb_build_object('type', 'event.listed', 'event_id', n.event_id,
                   'data', jsonb_build_object('event_id', n.event_id::text, 'name', n.name,
                     'start_at', n.start_at_raw)))
            INTO changes
          FROM new_rows n WHERE n.removed_at IS NULL AND (wanted IS NULL OR n.event_id = ANY (wanted));
        ELSE
          SELECT jsonb_agg(CASE
              WHEN o.removed_at IS NOT NULL THEN jsonb_build_object('type', 'event.listed', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'name', n.name, 'start_at', n.start_at_raw))
              WHEN n.removed_at IS NOT NULL THEN jsonb_build_object('type', 'event.removed', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'name', o.name))
              ELSE jsonb_build_object('type', 'event.updated', 'event_id', n.event_id,
                'data', jsonb_build_object('event_id', n.event_id::text, 'name', n.name, 'start_at', n.start_at_raw,
                  'previous_name', o.name, 'previous_start_at', o.start_at_raw)) END)
            INTO changes
          FROM old_rows o JOIN new_rows n ON n.event_id = o.event_id
          WHERE (wanted IS NULL OR n.event_id = ANY (wanted))
            AND ((o.removed_at IS NULL) <> (n.removed_at IS NULL)
              OR (n.removed_at IS NULL AND (o.name, o.start_at_raw, o.raw) IS DISTINCT FROM (n.name, n.start_at_raw, n.raw)));
        END IF;
        IF changes IS NOT NULL THEN PERFORM catalog_append(changes); END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER events_catalog_inserted AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION catalog_event_events()`);
    await queryRunner.query(`
      CREATE TRIGGER events_catalog_updated AFTER UPDATE ON events
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION catalog_event_events()`);
    // The end of a backfill: one event to the operators and one to each client with a catalog subscription.
    await queryRunner.query(`
      CREATE FUNCTION catalog_backfill_completed(p_data jsonb) RETURNS void LANGUAGE sql AS $$
        SELECT outbox_append(outbox_event_id(), 'sync.backfill_completed', 1::smallint, NULL, p_data);
        SELECT outbox_append(outbox_event_id(), 'sync.backfill_completed', 1::smallint, c.client_id, p_data)
        FROM (SELECT DISTINCT e.client_id FROM webhook_endpoints e WHERE e.enabled
                AND (cardinality(e.event_ids) > 0 OR e.event_types && ${CATALOG_TYPES})) c;
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION catalog_backfill_completed(jsonb)`);
    await queryRunner.query(`DROP TRIGGER events_catalog_updated ON events`);
    await queryRunner.query(`DROP TRIGGER events_catalog_inserted ON events`);
    await queryRunner.query(`DROP FUNCTION catalog_event_events()`);
    await queryRunner.query(`DROP TRIGGER listings_catalog_updated ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_catalog_inserted ON listings`);
    await queryRunner.query(`DROP FUNCTION catalog_listing_events()`);
    await queryRunner.query(`DROP FUNCTION catalog_removal_reason(numeric, numeric, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION catalog_append(jsonb)`);
    await queryRunner.query(`DROP FUNCTION catalog_money(numeric, int)`);
    await queryRunner.query(`DROP FUNCTION catalog_subscribers(text, numeric)`);
    await queryRunner.query(`DROP FUNCTION catalog_wanted_event_ids()`);
    await queryRunner.query(`DROP FUNCTION catalog_endpoint_wants(text[], numeric[], text, numeric)`);
    await queryRunner.query(
      `ALTER TABLE mirror_generation DROP COLUMN listings_epoch, DROP COLUMN events_epoch`,
    );
    await queryRunner.query(`ALTER TABLE webhook_endpoints DROP COLUMN event_ids`);
  }
}
