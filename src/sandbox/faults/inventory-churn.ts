import { GENERATED_INTEGRATOR_SUBJECT, generatedSellerSubject } from '../ledger/generator';
import type { SeededRandom } from '../chain/prng';
import type { SandboxCore } from '../sandbox.core';
import { LedgerError } from '../ledger/ledger';

/**
 * The inventory_churn fault: between two pages, cancel `count` random live listings and list `count` new
 * tickets, as other marketplaces would. New listings get new (higher) sequence numbers, so a walk already
 * under way sees them later in the walk; removed ones simply stop appearing.
 */
export function churnInventory(core: SandboxCore, count: number, rng: SeededRandom, nowMs: number): void {
  const { ledger, keys } = core;
  const size = ledger.counts().listings;
  // Random probes, bounded: a sparse ledger may have fewer live listings than `count`.
  const maxAttempts = size > 0 ? count * 20 : 0;
  for (let removed = 0, attempts = 0; removed < count && attempts < maxAttempts; attempts++) {
    const seq = rng.int(size);
    if (ledger.isListingLive(seq, nowMs)) {
      ledger.closeListing(seq);
      removed++;
    }
  }
  const { indices: upcoming } = ledger.upcomingEvents(0, Number.MAX_SAFE_INTEGER, nowMs);
  if (upcoming.length === 0) return;
  const authority = ledger.addresses.intern(keys.address('integrator', GENERATED_INTEGRATOR_SUBJECT));
  const identity = ledger.addresses.intern(keys.syntheticAddress('integrator-identity'));
  for (let i = 0; i < count; i++) {
    const event = ledger.events.get(rng.pick(upcoming));
    const k = rng.int(8);
    const seller = keys.address('user', generatedSellerSubject(k));
    let ticket: number;
    try {
      ticket = ledger.mintTicket(event.eventId, undefined, seller);
    } catch (error) {
      if (error instanceof LedgerError) continue; // the event has no ticket id left (admin minted u64 max)
      throw error;
    }
    ledger.openListing(ticket, {
      askPriceMinor: BigInt(500 + rng.int(40_000)) * 10_000n,
      sellerPayout: ledger.addresses.intern(keys.syntheticAddress('payout', k)),
      integratorIdentity: identity,
      integratorAuthority: authority,
      buyerAllow: -1,
      ticketTypeConfig: event.ticketTypeConfig,
      expiresAt: BigInt(Math.floor(event.startAtMs / 1000)),
    });
  }
}
