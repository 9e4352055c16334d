import { describe, expect, it } from 'vitest';
import { TransactionRegistry, type TransactionRecord } from './transaction.registry';

function record(id: string, expiresAtMs: number): TransactionRecord {
  return {
    id,
    transactionSignature: `sig-${id}`,
    wire: Buffer.alloc(0),
    body: {} as TransactionRecord['body'],
    kind: 'user',
    subject: 's',
    instruction: 'accept_offer_v2',
    pairs: [],
    apiKeyId: 'k',
    idempotencyKey: id,
    signedAtMs: 0,
    expiresAtMs,
    seq: 0,
    state: 'signed',
    updatedAtMs: 0,
  };
}

describe(TransactionRegistry.name, () => {
  it('lands due transactions in landing-time order, lazily', () => {
    const order: string[] = [];
    const sut = new TransactionRegistry((r, at) => {
      order.push(`${r.id}@${at}`);
      return r.id === 'b' ? 'nope' : undefined;
    });
    const [a, b] = [record('a', 10_000), record('b', 10_000)];
    sut.add(a);
    sut.add(b);
    sut.submit(b, 0, 100);
    sut.submit(a, 50, 100);
    sut.settle(120);
    expect(order).toEqual(['b@100']);
    sut.settle(1000);
    expect(order).toEqual(['b@100', 'a@150']);
    expect([a.state, b.state, b.failureReason]).toEqual(['confirmed', 'landed_with_error', 'nope']);
  });

  it('expires what cannot land before its blockhash ages out, and unsubmitted transactions', () => {
    const sut = new TransactionRegistry(() => undefined);
    const [late, idle, early] = [record('late', 1000), record('idle', 1000), record('early', 1000)];
    [late, idle, early].forEach((r) => sut.add(r));
    sut.submit(late, 500, 600);
    sut.submit(early, 1000, 0);
    sut.settle(2000);
    expect(late.state).toBe('expired');
    expect(early.state).toBe('expired');
    expect(sut.stateOf(idle, 999)).toBe('signed');
    expect(sut.stateOf(idle, 1000)).toBe('expired');
  });
});
