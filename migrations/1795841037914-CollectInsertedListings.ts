import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A backfill that captures nothing (issues 30 and 33, docs/catalog-sync.md "Catalog events"). The INSERT side of the
 * catalog events (…-CreateCatalogEvents.ts) and of the watch match (…-CreateWatchMatchTriggers.ts) were statement
 * triggers with a NEW transition table: PostgreSQL copies every inserted row into that table whatever the trigger
 * then does, so a backfill (`bff.catalog_backfill` on, nothing announced) still paid ~10 % of its rows/s for it.
 * A statement trigger cannot skip that capture; a row trigger whose WHEN is false queues nothing at all.
 *
 * So a statement's inserted rows are collected by its own triggers:
 * - BEFORE INSERT, per statement: decides whether anyone could want this statement's rows — a catalog subscriber
 *   outside a backfill (`catalog_wanted_event_ids()` not empty), or any watch (the watch match runs on a backfill
 *   too, as before) — and says so in the transaction-local `bff.listings_collect`; when on, a session-local
 *   `pg_temp.listings_inserted` (ON COMMIT DELETE ROWS) is made or emptied;
 * - AFTER INSERT, per row, WHEN the row is active and `bff.listings_collect` is on: its fields go into that table;
 * - AFTER INSERT, per statement, same condition (PostgreSQL fires them after every row trigger of the statement):
 *   the catalog announcement and the watch match read the table as they read the transition table before — one
 *   set-based statement per batch, in the statement's transaction (a rollback takes the rows and what they
 *   announced with it).
 * A backfill with no watch, and any write nobody subscribes to, thus queues and copies nothing per row. UPDATE keeps
 * its transition-table triggers: a backfill into an empty mirror updates nothing, and a price change needs the old
 * and new rows side by side. The bodies below are the INSERT branches of the functions they replace.
 */
const WHEN_COLLECTING = `current_setting('bff.listings_collect', true) = 'on'`;

const CATALOG_INSERTED = `
  CREATE FUNCTION catalog_listings_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    wanted numeric[] := catalog_wanted_event_ids();
    decimals int;
    changes jsonb;
  BEGIN
    IF wanted IS NOT NULL AND cardinality(wanted) = 0 THEN RETURN NULL; END IF;
    decimals := (SELECT stablecoin_decimals FROM protocol_config);
    SELECT jsonb_agg(jsonb_build_object('type', 'listing.listed', 'event_id', n.event_id,
             'data', jsonb_build_object('event_id', n.event_id::text, 'ticket_id', n.ticket_id::text,
               'price_minor', n.ask_price_minor::text, 'price', catalog_money(n.ask_price_minor, decimals),
               'expires_at', n.expires_at::text)))
      INTO changes
    FROM pg_temp.listings_inserted n WHERE wanted IS NULL OR n.event_id = ANY (wanted);
    IF changes IS NOT NULL THEN PERFORM catalog_append(changes); END IF;
    RETURN NULL;
  END $$`;

// The match statement of …-CreateWatchMatchTriggers.ts over the collected rows (every one active, none had a price).
const WATCHES_INSERTED = `
  CREATE FUNCTION watches_match_collected_listings() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    announced_count bigint;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM watches) THEN RETURN NULL; END IF;
    WITH changed AS (
      SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price, NULL::numeric AS previous, false AS was_active
      FROM pg_temp.listings_inserted n),
    pc AS (SELECT stablecoin_decimals, stablecoin_mint FROM protocol_config LIMIT 1),
    candidates AS (
      SELECT w.id AS watch_id, w.client_id, w.subject, w.cooldown_seconds, c.event_id, c.ticket_id, c.price,
        c.previous,
        CASE
          WHEN NOT c.was_active THEN CASE WHEN c.price <= w.max_price_minor THEN 'listed_under_max' END
          WHEN w.min_drop_percent IS NOT NULL
            AND (c.previous - c.price) * 100 >= c.previous * w.min_drop_percent THEN 'price_drop'
          WHEN c.price <= w.max_price_minor AND c.previous > w.max_price_minor THEN 'dropped_under_max'
        END AS reason
      FROM changed c
      JOIN watches w ON w.event_id = c.event_id AND (w.max_price_minor IS NULL OR w.max_price_minor >= c.price)
      WHERE (w.expires_at IS NULL OR w.expires_at > now())
        AND (w.cooldown_seconds IS NULL OR w.last_alerted_at IS NULL
             OR w.last_alerted_at + make_interval(secs => w.cooldown_seconds) <= now())
    ),
    picked AS (
      SELECT * FROM (
        SELECT cd.*, row_number() OVER (PARTITION BY cd.watch_id ORDER BY cd.price, cd.ticket_id) AS rank
        FROM candidates cd WHERE cd.reason IS NOT NULL) r
      WHERE r.cooldown_seconds IS NULL OR r.rank = 1
    ),
    alerted AS (
      INSERT INTO watch_alerts (watch_id, event_id, ticket_id, price_minor)
      SELECT watch_id, event_id, ticket_id, price FROM picked
      ON CONFLICT DO NOTHING
      RETURNING watch_id, event_id, ticket_id
    ),
    touched AS (
      UPDATE watches w SET last_alerted_at = now()
      FROM (SELECT DISTINCT watch_id FROM alerted) a
      WHERE w.id = a.watch_id
    ),
    announced AS (
      SELECT outbox_append(outbox_event_id(), 'watch.matched', 1::smallint, p.client_id, jsonb_build_object(
        'watch_id', p.watch_id, 'subject', p.subject,
        'listing', jsonb_build_object('event_id', p.event_id::text, 'ticket_id', p.ticket_id::text,
          'price', watch_money(p.price, pc.stablecoin_decimals, pc.stablecoin_mint)),
        'previous_price', watch_money(p.previous, pc.stablecoin_decimals, pc.stablecoin_mint),
        'reason', p.reason))
      FROM alerted a
      JOIN picked p ON p.watch_id = a.watch_id AND p.event_id = a.event_id AND p.ticket_id = a.ticket_id
      LEFT JOIN pc ON true
      ORDER BY p.event_id, p.ticket_id, p.watch_id
    )
    SELECT count(*) INTO announced_count FROM announced;
    RETURN NULL;
  END $$`;

export class CollectInsertedListings1795841037914 implements MigrationInterface {
  name = 'CollectInsertedListings1795841037914';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION listings_inserted_prepare() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        wanted numeric[] := catalog_wanted_event_ids();
        collect boolean := wanted IS NULL OR cardinality(wanted) > 0 OR EXISTS (SELECT 1 FROM watches);
      BEGIN
        PERFORM set_config('bff.listings_collect', CASE WHEN collect THEN 'on' ELSE 'off' END, true);
        IF NOT collect THEN RETURN NULL; END IF;
        IF to_regclass('pg_temp.listings_inserted') IS NULL THEN
          CREATE TEMP TABLE listings_inserted (event_id numeric NOT NULL, ticket_id numeric NOT NULL,
            ask_price_minor numeric NOT NULL, expires_at bigint NULL) ON COMMIT DELETE ROWS;
        ELSE
          DELETE FROM pg_temp.listings_inserted;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION listings_inserted_collect() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO pg_temp.listings_inserted (event_id, ticket_id, ask_price_minor, expires_at)
        VALUES (NEW.event_id, NEW.ticket_id, NEW.ask_price_minor, NEW.expires_at);
        RETURN NULL;
      END $$`);
    await queryRunner.query(CATALOG_INSERTED);
    await queryRunner.query(WATCHES_INSERTED);
    await queryRunner.query(`DROP TRIGGER listings_catalog_inserted ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_watch_match_inserted ON listings`);
    await queryRunner.query(`
      CREATE TRIGGER listings_inserted_prepare BEFORE INSERT ON listings FOR EACH STATEMENT
        EXECUTE FUNCTION listings_inserted_prepare()`);
    await queryRunner.query(`
      CREATE TRIGGER listings_inserted_collect AFTER INSERT ON listings FOR EACH ROW
        WHEN (NEW.removed_at IS NULL AND ${WHEN_COLLECTING}) EXECUTE FUNCTION listings_inserted_collect()`);
    await queryRunner.query(`
      CREATE TRIGGER listings_catalog_inserted AFTER INSERT ON listings FOR EACH STATEMENT
        WHEN (${WHEN_COLLECTING}) EXECUTE FUNCTION catalog_listings_inserted()`);
    await queryRunner.query(`
      CREATE TRIGGER listings_watch_match_inserted AFTER INSERT ON listings FOR EACH STATEMENT
        WHEN (${WHEN_COLLECTING}) EXECUTE FUNCTION watches_match_collected_listings()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER listings_watch_match_inserted ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_catalog_inserted ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_inserted_collect ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_inserted_prepare ON listings`);
    await queryRunner.query(
      `CREATE TRIGGER listings_watch_match_inserted AFTER INSERT ON listings
         REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION watches_match_inserted_listings()`,
    );
    await queryRunner.query(`
      CREATE TRIGGER listings_catalog_inserted AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION catalog_listing_events()`);
    await queryRunner.query(`DROP FUNCTION watches_match_collected_listings()`);
    await queryRunner.query(`DROP FUNCTION catalog_listings_inserted()`);
    await queryRunner.query(`DROP FUNCTION listings_inserted_collect()`);
    await queryRunner.query(`DROP FUNCTION listings_inserted_prepare()`);
  }
}
