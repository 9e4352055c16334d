import { describe, expect, it } from 'vitest';
import { generateDataset } from './generator';
import { SandboxLedger } from './ledger';
import { WalletKeys } from '../chain/wallet.keys';

function generate(seed: string, events: number, listings: number): SandboxLedger {
  const ledger = new SandboxLedger(new WalletKeys(seed), 0n);
  generateDataset(ledger, { seed, events, listings, nowMs: Date.UTC(2030, 0, 1) });
  return ledger;
}

function snapshot(ledger: SandboxLedger): string[] {
  const l = ledger.listings;
  return Array.from({ length: l.size }, (_, s) =>
    [
      ledger.events.get(l.eventIdx[s]).eventId,
      ledger.tickets.ticketId[l.ticketIdx[s]],
      l.askPriceMinor[s],
      ledger.addresses.get(l.seller[s]),
    ].join(':'),
  );
}

describe(generateDataset.name, () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = snapshot(generate('seed-a', 30, 3000));
    expect(snapshot(generate('seed-a', 30, 3000))).toEqual(a);
    expect(snapshot(generate('seed-b', 30, 3000))).not.toEqual(a);
  });

  it('skews listings so a few events hold most of them', () => {
    const ledger = generate('skew', 200, 100_000);
    const counts = new Map<number, number>();
    for (let s = 0; s < ledger.listings.size; s++)
      counts.set(ledger.listings.eventIdx[s], (counts.get(ledger.listings.eventIdx[s]) ?? 0) + 1);
    const sorted = [...counts.values()].sort((x, y) => y - x);
    expect(sorted[0]).toBeGreaterThan(10_000);
    expect(sorted.slice(0, 5).reduce((x, y) => x + y, 0)).toBeGreaterThan(30_000);
    expect(sorted[sorted.length - 1]).toBeLessThan(1000);
  });

  it('creates upcoming events, unique tickets, and insertion order that is not price order', () => {
    const ledger = generate('shape', 14, 2000);
    for (let e = 0; e < ledger.events.size; e++)
      expect(ledger.events.get(e).startAtMs).toBeGreaterThan(Date.UTC(2030, 0, 1));
    const keys = snapshot(ledger).map((k) => k.split(':').slice(0, 2).join(':'));
    expect(new Set(keys).size).toBe(2000);
    const prices = Array.from(ledger.listings.askPriceMinor);
    expect(prices.slice(0, 2000).every((p, i, all) => i === 0 || all[i - 1] <= p)).toBe(false);
    expect(ledger.listings.activeCount).toBe(2000);
  });

  it('puts some identifiers beyond 2^53 and finds generated tickets by id', () => {
    const ledger = generate('big', 14, 2000);
    const big = Array.from({ length: ledger.events.size }, (_, e) => ledger.events.get(e)).filter(
      (e) => e.eventId > 2n ** 63n,
    );
    expect(big.length).toBeGreaterThan(0);
    const l = ledger.listings;
    for (let s = 0; s < l.size; s += 97) {
      const event = ledger.events.get(l.eventIdx[s]);
      expect(ledger.findTicket(event.eventId, ledger.tickets.ticketId[l.ticketIdx[s]])).toBe(l.ticketIdx[s]);
    }
  });
});
