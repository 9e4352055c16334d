import { Logger } from '@nestjs/common';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CheckoutConfig } from '../config/checkout.config';
import type { LedgerRecord, TransactionsService } from '../transactions/transactions.service';
import { clientKeyHash, transactionKey } from './checkout.context';
import { CheckoutLedgerHooks, CHECKOUT_ON_FINAL } from './checkout.ledger-hooks';
import type { OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import type { OrderRepository } from './order.repository';

const CLIENT = '11111111-1111-4111-8111-111111111111';
const ORDER = '22222222-2222-4222-8222-222222222222';

/** An order closed as failed at attempt 3; its attempt keys derive from the client's key. */
/** The fields of an order its attempts' keys derive from. */
function keysOf(order: OrderEntity): {
  id: string;
  idempotencyKey: string;
  attemptKeys: OrderEntity['attemptKeys'];
} {
  return { id: order.id, idempotencyKey: order.idempotencyKey, attemptKeys: order.attemptKeys };
}

function closedOrder(overrides: Partial<OrderEntity> = {}): OrderEntity {
  return {
    id: ORDER,
    clientId: CLIENT,
    idempotencyKey: 'buy-1',
    attemptKeys: 'client_key',
    attempt: 3,
    state: 'failed',
    ...overrides,
  } as OrderEntity;
}

function record(overrides: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    id: 'tx-1',
    clientId: CLIENT,
    idempotencyKey: transactionKey({ ...keysOf(closedOrder()), attempt: 2 }),
    upstreamIdempotencyKey: 'up-1',
    orderId: ORDER,
    phase: 'signed',
    status: 'confirmed',
    failureReason: null,
    finalAt: new Date(),
    custodialTransactionId: 'c'.repeat(64),
    feePayerSignature: 'sig',
    ...overrides,
  };
}

/** Doubles for the order repository and the ledger: record what the handler asked. */
function setup(
  options: { wokenOrder?: string | null; stored?: OrderEntity | null; kept?: string | null } = {},
) {
  const reopened: unknown[][] = [];
  const found: string[] = [];
  const registered: string[] = [];
  const repo = {
    wakeByTransactionRecord: () => Promise.resolve(options.wokenOrder ?? null),
    findById: (id: string) => {
      found.push(id);
      return Promise.resolve(options.stored === undefined ? closedOrder() : options.stored);
    },
    reopenLanded: (...args: unknown[]) => {
      reopened.push(args);
      return Promise.resolve(ORDER);
    },
  } as unknown as OrderRepository;
  const transactions = {
    registerHooks: (hooks: CheckoutLedgerHooks) => registered.push(hooks.finalHandler),
    // What ledger_transaction_orders keeps for a record read without it (the tracker's claims do not join it).
    orderIdOf: () => Promise.resolve(options.kept ?? null),
  } as unknown as TransactionsService;
  const config = Object.assign(new CheckoutConfig(), { CHECKOUT_MAX_ATTEMPTS: 3 });
  const sut = new CheckoutLedgerHooks({} as OrderCommitter, repo, transactions, config);
  const woken: string[] = [];
  sut.wakeOrdersWith((id) => woken.push(id));
  return { sut, reopened, found, woken, registered };
}

describe(CheckoutLedgerHooks.name, () => {
  beforeEach(() => {
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  it('registers its after-final handler under the name the order’s transactions carry', () => {
    const { sut, registered } = setup();
    sut.onModuleInit();
    expect(registered).toEqual([CHECKOUT_ON_FINAL]);
  });

  it('wakes the order whose current transaction became final, and reopens nothing', async () => {
    const { sut, woken, reopened, found } = setup({ wokenOrder: ORDER });
    await sut.afterFinal(record());
    expect(woken).toEqual([ORDER]);
    expect(reopened).toEqual([]);
    expect(found).toEqual([]);
  });

  it('finds a closed order by the order id on the ledger row and reopens the attempt whose key is the row’s', async () => {
    const { sut, woken, reopened, found } = setup();
    await sut.afterFinal(record());
    expect(found).toEqual([ORDER]);
    expect(reopened).toHaveLength(1);
    expect(reopened[0][0]).toBe(CLIENT);
    expect(reopened[0][1]).toEqual({ orderId: ORDER, attempt: 2 });
    expect(woken).toEqual([ORDER]);
  });

  it('reads the order the ledger keeps for a record that does not carry it (a tracker claim)', async () => {
    const { sut, reopened, found } = setup({ kept: ORDER });
    await sut.afterFinal(record({ orderId: null }));
    expect(found).toEqual([ORDER]);
    expect(reopened[0][1]).toEqual({ orderId: ORDER, attempt: 2 });
  });

  it('falls back to parsing the key for a transaction written before order_id (an attempt in flight across the upgrade)', async () => {
    const { sut, reopened, found } = setup();
    await sut.afterFinal(record({ orderId: null }));
    expect(found).toEqual([]);
    expect(reopened[0][1]).toEqual({ attempt: 2, clientKeyHash: clientKeyHash('buy-1') });
  });

  it('reopens nothing when the named order derives no such key, belongs to another client, or is gone', async () => {
    for (const stored of [
      closedOrder({ idempotencyKey: 'another-key' }),
      closedOrder({ clientId: '33333333-3333-4333-8333-333333333333' }),
      null,
    ]) {
      const { sut, reopened, woken } = setup({ stored });
      await sut.afterFinal(record());
      expect(reopened).toEqual([]);
      expect(woken).toEqual([]);
    }
  });

  it('reopens nothing for a final status other than confirmed', async () => {
    for (const status of ['expired', 'landed_with_error'] as const) {
      const { sut, reopened, found } = setup();
      await sut.afterFinal(record({ status }));
      expect(reopened).toEqual([]);
      expect(found).toEqual([]);
    }
  });
});
