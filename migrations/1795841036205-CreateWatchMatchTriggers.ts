import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The watch match (owned by `watches/`, docs/watches.md "Matching"): statement-level triggers on `listings` with
 * transition tables, so every write path of the mirror (a full pass's batch, a per-event walk, a live observation
 * of checkout or selling, a test's SQL) is matched in the statement that makes the change, in its transaction
 * (a rollback takes the alerts with it), one set-based statement per batch:
 *
 * - the changed rows that can alert: a listing that became active (inserted, or re-listed after a removal) and
 *   an active listing whose price went down; every other change (a removal, a price rise, other fields) is not
 *   looked at further;
 * - joined to the unexpired watches of their event under their max price (`watches_event_price_idx`), outside
 *   their cooldown; reason `listed_under_max` (a new listing at or under the max), `price_drop` (a fall of at least
 *   `min_drop_percent`, ending at or under the max when there is one) or `dropped_under_max` (an active listing
 *   fell from above the max to at or under it); a watch with a cooldown takes the cheapest of the batch only;
 * - recorded in `watch_alerts` (ON CONFLICT DO NOTHING: never the same listing twice at the same price) and only
 *   the rows recorded are announced as `watch.matched` through `outbox_append`, to the watch's client only.
 *
 * A rewrite that changes nothing is not a write (the mirror's stale-write guards), so a second replica writing the
 * same change has no rows here; `watch_alerts` would stop a repeat anyway. With no watch at all the functions
 * return after one EXISTS probe.
 */
const UNFORMATTED_REASON =
  'protocol config not fetched from the upstream yet: stablecoin_decimals unknown, amount not formatted';

/** The match statement over `changed` (event_id, ticket_id, price, previous, was_active). */
function matchStatement(changed: string): string {
  return `
    WITH changed AS (${changed}),
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
    SELECT count(*) INTO announced_count FROM announced`;
}

const INSERTED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price, NULL::numeric AS previous, false AS was_active
  FROM n WHERE n.removed_at IS NULL`;

const UPDATED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price,
    CASE WHEN o.removed_at IS NULL THEN o.ask_price_minor END AS previous, o.removed_at IS NULL AS was_active
  FROM n JOIN o ON o.event_id = n.event_id AND o.ticket_id = n.ticket_id
  WHERE n.removed_at IS NULL AND (o.removed_at IS NOT NULL OR n.ask_price_minor < o.ask_price_minor)`;

function matchFunction(name: string, changed: string): string {
  return `
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      announced_count bigint;
    BEGIN
      -- No watch at all (the common case): nothing to join.
      IF NOT EXISTS (SELECT 1 FROM watches) THEN RETURN NULL; END IF;
      ${matchStatement(changed)};
      RETURN NULL;
    END $$`;
}

export class CreateWatchMatchTriggers1795841036205 implements MigrationInterface {
  name = 'CreateWatchMatchTriggers1795841036205';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The read API's money view (src/listings/listing.mapper.ts moneyView, src/common/money.ts formatMinor) in
    // SQL: exact, trailing fractional zeros trimmed; minor units only while the protocol config is unknown.
    await queryRunner.query(`
      CREATE FUNCTION watch_money(p_minor numeric, p_decimals smallint, p_mint text) RETURNS jsonb
      LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE
          WHEN p_minor IS NULL THEN NULL
          WHEN p_decimals IS NULL THEN jsonb_build_object('minor', p_minor::text,
            'unformatted_reason', '${UNFORMATTED_REASON}')
          ELSE jsonb_build_object('minor', p_minor::text, 'decimals', p_decimals, 'currency_mint', p_mint,
            'amount', CASE
              WHEN p_decimals = 0 THEN p_minor::text
              ELSE (SELECT CASE WHEN f = '' THEN w ELSE w || '.' || f END
                    FROM (SELECT left(p, length(p) - p_decimals) AS w, rtrim(right(p, p_decimals), '0') AS f
                          FROM (SELECT lpad(p_minor::text, greatest(length(p_minor::text), p_decimals + 1), '0')
                                AS p) padded) parts)
            END)
        END
      $$`);
    await queryRunner.query(matchFunction('watches_match_inserted_listings', INSERTED));
    await queryRunner.query(matchFunction('watches_match_updated_listings', UPDATED));
    await queryRunner.query(
      `CREATE TRIGGER listings_watch_match_inserted AFTER INSERT ON listings
         REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION watches_match_inserted_listings()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER listings_watch_match_updated AFTER UPDATE ON listings
         REFERENCING OLD TABLE AS o NEW TABLE AS n FOR EACH STATEMENT
         EXECUTE FUNCTION watches_match_updated_listings()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER listings_watch_match_updated ON listings`);
    await queryRunner.query(`DROP TRIGGER listings_watch_match_inserted ON listings`);
    await queryRunner.query(`DROP FUNCTION watches_match_updated_listings()`);
    await queryRunner.query(`DROP FUNCTION watches_match_inserted_listings()`);
    await queryRunner.query(`DROP FUNCTION watch_money(numeric, smallint, text)`);
  }
}
