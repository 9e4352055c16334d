import type { Pool } from 'pg';
import { holdConnection } from '../database/held-connection';
import type { UpstreamClient } from '../upstream/upstream.client';
import { eventKey, listingKey, mapEvent, mapListing, mapPage } from './catalog-sync.mapper';
import { EventRepository } from './event.repository';
import { ListingRepository } from './listing.repository';

export interface VerifyFindings {
  resource: 'events' | 'listings';
  upstreamItems: number;
  skipped: number;
  missing: { count: number; sample: string[] };
  extra: { count: number; sample: string[] };
  differing: { count: number; sample: string[] };
}

const SAMPLE = 50;

/**
 * `npm run sync:verify`: walks the upstream (events, then listings) and compares every item with the
 * mirror's active rows: missing (upstream has it, mirror does not), extra (mirror has it, upstream does
 * not) and differing (content differs). Memory is bounded by the page size: seen keys go to a TEMP table.
 */
export async function verifyMirror(
  pool: Pool,
  upstream: UpstreamClient,
  pageSize: number,
): Promise<VerifyFindings[]> {
  // Held with an `error` listener: a terminated backend fails the verification, it does not crash the CLI.
  const connection = await holdConnection(pool);
  const { client } = connection;
  const events = new EventRepository();
  const listings = new ListingRepository();
  const findings: VerifyFindings[] = [];
  try {
    for (const resource of ['events', 'listings'] as const) {
      const repo = resource === 'events' ? events : listings;
      await repo.prepareSeen(client);
      const f: VerifyFindings = {
        resource,
        upstreamItems: 0,
        skipped: 0,
        missing: { count: 0, sample: [] },
        extra: { count: 0, sample: [] },
        differing: { count: 0, sample: [] },
      };
      const walk =
        resource === 'events'
          ? upstream.walkUpcomingEvents({ limit: pageSize })
          : upstream.walkActiveListings({ limit: pageSize });
      for await (const page of walk) {
        f.upstreamItems += page.items.length;
        const compared =
          resource === 'events'
            ? await (async () => {
                const mapped = mapPage(page.items as never, mapEvent, eventKey);
                f.skipped += mapped.skippedCount;
                return events.comparePage(client, mapped.rows);
              })()
            : await (async () => {
                const mapped = mapPage(page.items as never, mapListing, listingKey);
                f.skipped += mapped.skippedCount;
                return listings.comparePage(client, mapped.rows);
              })();
        f.missing.count += compared.missing.length;
        f.differing.count += compared.differing.length;
        f.missing.sample.push(...compared.missing.slice(0, SAMPLE - f.missing.sample.length));
        f.differing.sample.push(...compared.differing.slice(0, SAMPLE - f.differing.sample.length));
      }
      const unseen = await repo.unseenActive(client, SAMPLE);
      f.extra = { count: unseen.count, sample: unseen.keys };
      await repo.dropSeen(client);
      findings.push(f);
    }
    return findings;
  } catch (error) {
    // The statement's failure after a lost connection is only its symptom: name the cause.
    throw connection.lost ?? error;
  } finally {
    connection.release();
  }
}

export function formatFindings(findings: readonly VerifyFindings[]): { text: string; clean: boolean } {
  const lines: string[] = [];
  let clean = true;
  for (const f of findings) {
    const problems = f.missing.count + f.extra.count + f.differing.count;
    if (problems > 0) clean = false;
    lines.push(
      `${f.resource}: ${f.upstreamItems} upstream items, ${f.skipped} skipped (no identifier); ` +
        `missing ${f.missing.count}, extra ${f.extra.count}, differing ${f.differing.count}`,
    );
    for (const [what, list] of [
      ['missing', f.missing],
      ['extra', f.extra],
      ['differing', f.differing],
    ] as const) {
      for (const key of list.sample) lines.push(`  ${what} ${f.resource} ${key}`);
      if (list.count > list.sample.length) lines.push(`  … ${list.count - list.sample.length} more ${what}`);
    }
  }
  lines.push(clean ? 'mirror matches the upstream' : 'mirror differs from the upstream');
  return { text: lines.join('\n'), clean };
}
