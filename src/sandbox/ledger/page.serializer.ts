import type { FaultPlan } from '../faults/injector';
import type { SeededRandom } from '../chain/prng';
import type { SandboxLedger } from './ledger';
import { u64Json } from '../chain/u64.codec';
import { ITEM_BYTES } from './listing.fragments';
import { EXTRA, nullPick, writeListings } from './listing.writer';
import { PageBytes } from './page.bytes';

/**
 * Listing items as JSON text (comma-separated, no brackets), e.g. for the admin listing view. `cached: false`
 * writes every piece from the columns, bypassing the fragment cache (the reference in tests).
 */
export function serializeListings(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
  cached = true,
): string {
  const out = new PageBytes(ITEM_BYTES * Math.max(1, seqs.length));
  writeListings(out, ledger, seqs, plan, rng, cached);
  const text = out.bytes().toString('utf8');
  out.release();
  return text;
}

/** A page's bytes and how to give their buffer back once they have been sent (see takePageBuffer). */
export interface PageBody {
  bytes: Buffer;
  release: () => void;
}

/** A whole listings page (contract 2.6) as bytes, ready to send; release() once they are sent. */
export function listingsPageBytes(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
  nextCursor: string | null,
): PageBody {
  const out = new PageBytes(ITEM_BYTES * Math.max(1, seqs.length));
  out.ascii('{"items":[');
  writeListings(out, ledger, seqs, plan, rng);
  out.ensure(256 + (nextCursor?.length ?? 0));
  out.ascii(
    `],"next_cursor":${nextCursor === null ? 'null' : `"${nextCursor}"`}${plan.extraFields ? EXTRA : ''}}`,
  );
  return { bytes: out.bytes(), release: () => out.release() };
}

export function serializeEvents(
  ledger: SandboxLedger,
  indices: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
): string {
  return indices
    .map((index) => {
      const e = ledger.events.get(index);
      const id = nullPick(plan, rng) === 0 ? u64Json(e.eventId, plan.u64AsNumber) : 'null';
      const royalty = e.royalty.map((r) => ledger.addresses.quoted(r)).join(',');
      return (
        `{"event_id":${id},"name":${e.nameJson},"start_at":${e.startAtJson},"venue":${e.venueJson}` +
        `,"royalty_destinations":[${royalty}],"ticket_type_config":${ledger.addresses.quoted(e.ticketTypeConfig)}` +
        `${plan.extraFields ? EXTRA : ''}}`
      );
    })
    .join(',');
}

/** The page envelope (contract 2.6); `next_cursor` is null on the last page. */
export function pageJson(itemsJson: string, nextCursor: string | null, extraFields: boolean): string {
  const cursor = nextCursor === null ? 'null' : `"${nextCursor}"`;
  return `{"items":[${itemsJson}],"next_cursor":${cursor}${extraFields ? EXTRA : ''}}`;
}
