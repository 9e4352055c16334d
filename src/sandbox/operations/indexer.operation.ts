import type { FaultPlan } from '../faults/injector';
import { churnInventory } from '../faults/inventory-churn';
import { listingsPageBytes, pageJson, serializeEvents } from '../ledger/page.serializer';
import type { CursorPosition } from './cursor';
import type { SandboxCore } from '../sandbox.core';
import { problemReply, type SandboxReply } from '../http/reply';
import { parseU64 } from '../chain/u64.codec';

type Query = Record<string, string | string[] | undefined>;

interface PageRequest {
  limit: number;
  from: number;
  /** Empty pages already served at `from` (see CursorPosition.stall). */
  stall: number;
  scope: string;
}

/** Parses limit and cursor (and the scope the cursor must belong to); unknown query parameters are ignored. */
function readPaging(
  core: SandboxCore,
  query: Query,
  resource: CursorPosition['resource'],
  scope: string,
): PageRequest | SandboxReply {
  const { limit: rawLimit, cursor } = query;
  if (Array.isArray(rawLimit) || Array.isArray(cursor)) {
    return problemReply(400, 'bad_request', 'limit and cursor may appear at most once');
  }
  let limit = core.options.defaultPageLimit;
  if (rawLimit !== undefined) {
    limit = /^[0-9]{1,7}$/.test(rawLimit) ? Number(rawLimit) : 0;
    if (limit < 1 || limit > core.options.maxPageLimit) {
      return problemReply(
        400,
        'bad_request',
        `limit must be an integer from 1 to ${core.options.maxPageLimit}`,
      );
    }
  }
  if (cursor === undefined) return { limit, from: 0, stall: 0, scope };
  const position = core.cursors.decode(cursor);
  if (position === undefined) return problemReply(400, 'invalid_cursor', 'cursor is not valid');
  if (position.resource !== resource || position.scope !== scope) {
    return problemReply(400, 'invalid_cursor', 'cursor belongs to a different resource or filter');
  }
  if (position.epoch !== core.epoch)
    return problemReply(400, 'invalid_cursor', 'cursor predates a sandbox reset');
  return { limit, from: position.from, stall: position.stall, scope };
}

function cursorFor(
  core: SandboxCore,
  resource: CursorPosition['resource'],
  page: PageRequest,
  from: number | null,
): string | null {
  if (from === null) return null;
  return core.cursors.encode({ resource, scope: page.scope, epoch: core.epoch, from, stall: 0 });
}

/**
 * The empty_page fault: no items and a cursor to the same position, yet a new cursor string (a real server
 * would not hand back the cursor it was asked with), so clients that refuse repeated cursors keep walking.
 */
function emptyPage(
  core: SandboxCore,
  resource: CursorPosition['resource'],
  page: PageRequest,
  extraFields: boolean,
): SandboxReply {
  const cursor = core.cursors.encode({
    resource,
    scope: page.scope,
    epoch: core.epoch,
    from: page.from,
    stall: page.stall + 1,
  });
  return { kind: 'json', status: 200, body: pageJson('', cursor, extraFields) };
}

/** GET /indexer/listings/active: live listings in insertion order (not price order), optional eventId. */
export function listingsPage(core: SandboxCore, query: Query, plan: FaultPlan): SandboxReply {
  const eventFilter = query.eventId;
  let scope = '*';
  if (eventFilter !== undefined) {
    const parsed = Array.isArray(eventFilter) ? undefined : parseU64(eventFilter);
    if (parsed === undefined || !parsed.ok)
      return problemReply(400, 'bad_request', 'eventId must be a u64 decimal string');
    scope = parsed.value.toString();
  }
  const page = readPaging(core, query, 'listings', scope);
  if ('kind' in page) return page;
  const now = core.settle();
  const rng = core.faults.random();
  if (plan.emptyPage) return emptyPage(core, 'listings', page, plan.extraFields);
  const { ledger } = core;
  const { seqs, next } = ledger.liveListings(
    page.from,
    page.limit,
    now,
    scope === '*' ? undefined : BigInt(scope),
  );
  const body = listingsPageBytes(ledger, seqs, plan, rng, cursorFor(core, 'listings', page, next));
  if (plan.churn > 0) churnInventory(core, plan.churn, rng, now);
  return { kind: 'json', status: 200, body: body.bytes, sent: body.release };
}

/** GET /indexer/events/upcoming: events whose start is still ahead of the sandbox clock, in creation order. */
export function eventsPage(core: SandboxCore, query: Query, plan: FaultPlan): SandboxReply {
  const page = readPaging(core, query, 'events', '*');
  if ('kind' in page) return page;
  const now = core.settle();
  if (plan.emptyPage) return emptyPage(core, 'events', page, plan.extraFields);
  const { indices, next } = core.ledger.upcomingEvents(page.from, page.limit, now);
  const items = serializeEvents(core.ledger, indices, plan, core.faults.random());
  return {
    kind: 'json',
    status: 200,
    body: pageJson(items, cursorFor(core, 'events', page, next), plan.extraFields),
  };
}
