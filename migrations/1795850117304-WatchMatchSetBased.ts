import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The watch match announces a batch's `watch.matched` events set-based (issue 32, docs/watches.md "Matching",
 * docs/BENCHMARKS.md "Session 17: catalog cost"). Same triggers, same match, same payloads, same feed order; two
 * changes to how the matched rows are announced:
 *
 * - one `outbox_append_set` call per statement (…-CreateOutboxAppendSet.ts: one INSERT of the events and one of
 *   their deliveries) instead of one `outbox_append` call per event, two statements each, run one at a time;
 * - a changed listing's JSON (`listing` with its formatted price, `previous_price`) is built once per changed row
 *   and shared by every watch it alerts, instead of once per watch;
 * - the alerts recorded are told from repeats by a GROUP BY, not a join (see `announceSet`);
 * - only watches with a cooldown are ranked (the cheapest of the batch): the window's sort of every candidate, wide
 *   with its JSON, spilled to disk for a dense batch and served no watch without a cooldown;
 * - `watches` keeps half of each page free (fillfactor 50, for pages written from now on): every alert sets its
 *   watch's `last_alerted_at`, a column no index holds, so with room on the page the update is HOT (no new index
 *   entries in the table's three indexes) — a dense pass updates as many watches as it alerts.
 *
 * The function bodies replaced are those of …-CreateWatchMatchTriggers.ts (UPDATE, over the transition tables) and
 * …-CollectInsertedListings.ts (INSERT, over `pg_temp.listings_inserted`); `down` puts them back.
 */
const INSERTED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price, NULL::numeric AS previous, false AS was_active
  FROM pg_temp.listings_inserted n`;

const UPDATED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price,
    CASE WHEN o.removed_at IS NULL THEN o.ask_price_minor END AS previous, o.removed_at IS NULL AS was_active
  FROM n JOIN o ON o.event_id = n.event_id AND o.ticket_id = n.ticket_id
  WHERE n.removed_at IS NULL AND (o.removed_at IS NOT NULL OR n.ask_price_minor < o.ask_price_minor)`;

const MONEY = (minor: string) => `watch_money(${minor}, pc.stablecoin_decimals, pc.stablecoin_mint)`;

/**
 * The match of the changed rows, recorded in `watch_alerts` (only new rows go on), and `last_alerted_at`. `listing`
 * and `previous_price` (the JSON of a changed row) are built in `changed`, MATERIALIZED: once per changed row,
 * not once per watch it matches (`set`); `each` builds them per watch, as before.
 */
function match(changed: string, set: boolean): string {
  const shown = set
    ? `, jsonb_build_object('event_id', c.event_id::text, 'ticket_id', c.ticket_id::text,
          'price', ${MONEY('c.price')}) AS listing, ${MONEY('c.previous')} AS previous_price`
    : '';
  return `
    WITH pc AS (SELECT stablecoin_decimals, stablecoin_mint FROM protocol_config LIMIT 1),
    changed AS ${set ? 'MATERIALIZED ' : ''}(
      SELECT c.*${shown} FROM (${changed}) c${set ? ' LEFT JOIN pc ON true' : ''}),
    candidates AS (
      SELECT w.id AS watch_id, w.client_id, w.subject, w.cooldown_seconds, c.event_id, c.ticket_id, c.price,
        c.previous,${set ? ' c.listing, c.previous_price,' : ''}
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
    picked AS (${
      set
        ? `
      SELECT cd.*, 1::bigint AS rank FROM candidates cd WHERE cd.reason IS NOT NULL AND cd.cooldown_seconds IS NULL
      UNION ALL
      SELECT * FROM (
        SELECT cd.*, row_number() OVER (PARTITION BY cd.watch_id ORDER BY cd.price, cd.ticket_id) AS rank
        FROM candidates cd WHERE cd.reason IS NOT NULL AND cd.cooldown_seconds IS NOT NULL) r
      WHERE r.rank = 1`
        : `
      SELECT * FROM (
        SELECT cd.*, row_number() OVER (PARTITION BY cd.watch_id ORDER BY cd.price, cd.ticket_id) AS rank
        FROM candidates cd WHERE cd.reason IS NOT NULL) r
      WHERE r.cooldown_seconds IS NULL OR r.rank = 1`
    }
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
    )`;
}

/**
 * Set-based: every event of the statement in one outbox_append_set call, in (event, ticket, watch) order. Which
 * picked rows were recorded (not a repeat) is found by grouping `alerted` and `picked` together on their key, not
 * by joining them: the planner cannot know a batch's size (its rows come from transition tables) and picked a
 * nested loop over the two CTE scans, quadratic in the batch (10,000 alerts in one statement: minutes).
 */
function announceSet(changed: string): string {
  return `${match(changed, true)},
    announced AS (
      SELECT u.watch_id, u.event_id, u.ticket_id,
        (array_agg(u.client_id) FILTER (WHERE NOT u.recorded))[1] AS client_id,
        (array_agg(u.data) FILTER (WHERE NOT u.recorded))[1] AS data
      FROM (
        SELECT watch_id, event_id, ticket_id, true AS recorded, NULL::uuid AS client_id, NULL::jsonb AS data
        FROM alerted
        UNION ALL
        SELECT p.watch_id, p.event_id, p.ticket_id, false, p.client_id, jsonb_build_object(
          'watch_id', p.watch_id, 'subject', p.subject, 'listing', p.listing,
          'previous_price', p.previous_price, 'reason', p.reason)
        FROM picked p) u
      GROUP BY u.watch_id, u.event_id, u.ticket_id
      HAVING bool_or(u.recorded)
    )
    SELECT outbox_append_set('watch.matched', 1::smallint,
      array_agg(client_id ORDER BY event_id, ticket_id, watch_id),
      array_agg(data ORDER BY event_id, ticket_id, watch_id))
    INTO announced_count
    FROM announced`;
}

/** As before this migration: one outbox_append per alert, its JSON built per watch. */
function announceEach(changed: string): string {
  return `${match(changed, false)},
    announced AS (
      SELECT outbox_append(outbox_event_id(), 'watch.matched', 1::smallint, p.client_id, jsonb_build_object(
        'watch_id', p.watch_id, 'subject', p.subject,
        'listing', jsonb_build_object('event_id', p.event_id::text, 'ticket_id', p.ticket_id::text,
          'price', ${MONEY('p.price')}),
        'previous_price', ${MONEY('p.previous')},
        'reason', p.reason))
      FROM alerted a
      JOIN picked p ON p.watch_id = a.watch_id AND p.event_id = a.event_id AND p.ticket_id = a.ticket_id
      LEFT JOIN pc ON true
      ORDER BY p.event_id, p.ticket_id, p.watch_id
    )
    SELECT count(*) INTO announced_count FROM announced`;
}

function matchFunction(name: string, statement: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      announced_count bigint;
    BEGIN
      -- No watch at all (the common case): nothing to join.
      IF NOT EXISTS (SELECT 1 FROM watches) THEN RETURN NULL; END IF;
      ${statement};
      RETURN NULL;
    END $$`;
}

export class WatchMatchSetBased1795850117304 implements MigrationInterface {
  name = 'WatchMatchSetBased1795850117304';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE watches SET (fillfactor = 50)`);
    await queryRunner.query(matchFunction('watches_match_updated_listings', announceSet(UPDATED)));
    await queryRunner.query(matchFunction('watches_match_collected_listings', announceSet(INSERTED)));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE watches RESET (fillfactor)`);
    await queryRunner.query(matchFunction('watches_match_updated_listings', announceEach(UPDATED)));
    await queryRunner.query(matchFunction('watches_match_collected_listings', announceEach(INSERTED)));
  }
}
