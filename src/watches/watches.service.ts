import { Injectable } from '@nestjs/common';
import type { ClientContext } from '../auth/client-context';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { Page } from '../common/dto/page.dto';
import { parseU64String } from '../common/int64.validators';
import { KeysetCursorCodec } from '../common/keyset-cursor';
import { keysetPage } from '../common/keyset-page';
import { WebhooksConfig } from '../config/webhooks.config';
import { parseRfc3339 } from '../listings/dto/rfc3339.validator';
import { WATCH_MAX_DAYS, type CreateWatchDto } from './dto/create-watch.dto';
import type { ListWatchesQueryDto } from './dto/list-watches.query.dto';
import { toWatchView, type WatchView } from './watch.mapper';
import { isWatchId, WatchRepository } from './watch.repository';
import { WatchesErrors } from './watches.errors';

/** Candidates a name search shows when it matches more than one event. */
const Q_CANDIDATES = 5;

/**
 * The watches API (`/v1/watches`, docs/watches.md): each client sees and deletes only its own. The match itself is
 * the database's (triggers on the mirror's listings, migration CreateWatchMatchTriggers): nothing here runs when
 * the mirror changes.
 */
@Injectable()
export class WatchesService {
  constructor(
    private readonly watches: WatchRepository,
    private readonly mirror: CatalogMirrorService,
    private readonly cursors: KeysetCursorCodec,
    private readonly config: WebhooksConfig,
  ) {}

  /** A new watch; `subject` was checked against the key's binding by the access guard. */
  async create(client: ClientContext, input: CreateWatchDto): Promise<WatchView> {
    if ((input.event_id === undefined) === (input.q === undefined)) throw WatchesErrors.target();
    if (input.max_price_minor === undefined && input.min_drop_percent === undefined)
      throw WatchesErrors.condition();
    const eventId = input.q === undefined ? parseU64String(input.event_id) : await this.resolve(input.q);
    if (eventId === undefined) throw WatchesErrors.target();
    const max = this.config.WATCHES_MAX_PER_CLIENT;
    const created = await this.watches.create(
      {
        clientId: client.id,
        eventId,
        query: input.q ?? null,
        maxPriceMinor: input.max_price_minor === undefined ? null : BigInt(input.max_price_minor),
        minDropPercent: input.min_drop_percent ?? null,
        subject: input.subject ?? null,
        cooldownSeconds: input.cooldown_seconds ?? null,
        expiresAt: input.expires_at === undefined ? null : (parseRfc3339(input.expires_at) ?? null),
      },
      max,
      WATCH_MAX_DAYS,
    );
    if (created === 'cap') throw WatchesErrors.tooMany(max);
    if (created === 'expires_in_past') throw WatchesErrors.expiresInPast();
    if (created === 'expires_too_far') throw WatchesErrors.expiresTooFar(WATCH_MAX_DAYS);
    return toWatchView(created);
  }

  async list(client: ClientContext, query: ListWatchesQueryDto): Promise<Page<WatchView>> {
    const binding = {
      sort: 'created_desc',
      filters: { client: client.id, subject: query.subject, event_id: query.event_id },
    };
    const after = query.cursor === undefined ? null : this.position(query.cursor, binding);
    const rows = await this.watches.page(client.id, query.limit, after, {
      subject: query.subject,
      eventId: query.event_id === undefined ? undefined : parseU64String(query.event_id),
    });
    const page = keysetPage(rows, query.limit, (r) => [r.created_key, r.id], this.cursors, binding);
    return { items: page.items.map(toWatchView), next_cursor: page.next_cursor };
  }

  async get(client: ClientContext, id: string): Promise<WatchView> {
    const row = await this.watches.get(client.id, id);
    if (!row) throw WatchesErrors.notFound();
    return toWatchView(row);
  }

  async delete(client: ClientContext, id: string): Promise<void> {
    if (!(await this.watches.delete(client.id, id))) throw WatchesErrors.notFound();
  }

  /** The one upcoming event whose name contains `q` (case-insensitive), else a 400 naming q. */
  private async resolve(q: string): Promise<bigint> {
    const rows = await this.mirror.eventsPage({ nameContains: q, limit: Q_CANDIDATES });
    const [only] = rows;
    if (only === undefined) throw WatchesErrors.noEventMatches();
    if (rows.length > 1)
      throw WatchesErrors.ambiguous(
        rows.slice(0, Q_CANDIDATES).map((r) => ({ event_id: r.event_id, name: r.name })),
        rows.length > Q_CANDIDATES,
      );
    return BigInt(only.event_id);
  }

  private position(
    cursor: string,
    binding: { sort: string; filters: Record<string, string | undefined> },
  ): [string, string] {
    const [created, id] = this.cursors.decode(cursor, binding);
    if (typeof created !== 'string' || typeof id !== 'string' || !isWatchId(id))
      throw WatchesErrors.badCursor();
    return [created, id];
  }
}
