import { describe, expect, it } from 'vitest';
import {
  DatabaseBusyError,
  inBackground,
  isBackground,
  isConnectionLost,
  isDatabaseBusy,
  DatabaseConnectionLostError,
  reservedConnections,
  Semaphore,
} from './pool-gate';

describe(Semaphore.name, () => {
  it('grants up to its size, queues the rest in order, and a release is counted once', async () => {
    const sut = new Semaphore(2);
    const a = await sut.acquire(1000, () => new Error('timeout'));
    const b = await sut.acquire(1000, () => new Error('timeout'));
    const order: string[] = [];
    const c = sut.acquire(1000, () => new Error('timeout')).then((r) => (order.push('c'), r));
    const d = sut.acquire(1000, () => new Error('timeout')).then((r) => (order.push('d'), r));
    expect([sut.inUse, sut.waiting]).toEqual([2, 2]);
    a();
    a();
    const releaseC = await c;
    expect([sut.inUse, sut.waiting]).toEqual([2, 1]);
    b();
    const releaseD = await d;
    releaseC();
    releaseD();
    expect(order).toEqual(['c', 'd']);
    expect([sut.inUse, sut.waiting]).toEqual([0, 0]);
  });

  it('rejects a waiter with the given error after its timeout and forgets it', async () => {
    const sut = new Semaphore(1);
    const held = await sut.acquire(1000, () => new Error('timeout'));
    await expect(sut.acquire(5, () => new DatabaseBusyError())).rejects.toBeInstanceOf(DatabaseBusyError);
    expect(sut.waiting).toBe(0);
    held();
    expect(sut.inUse).toBe(0);
  });
});

describe(inBackground.name, () => {
  it('marks everything started inside it, across awaits, and nothing outside', async () => {
    const inside = await inBackground(async () => {
      await new Promise((r) => setTimeout(r, 1));
      return isBackground();
    });
    expect([inside, isBackground()]).toEqual([true, false]);
  });
});

describe(reservedConnections.name, () => {
  it('reserves a quarter of the pool for requests (none below 4)', () => {
    expect([1, 3, 4, 10, 20].map(reservedConnections)).toEqual([0, 0, 1, 2, 5]);
  });
});

const pgError = (code: string): Error => Object.assign(new Error('pg'), { code });

describe(isDatabaseBusy.name, () => {
  it.each([
    ['pool acquire timeout', new Error('timeout exceeded when trying to connect')],
    ['connect timeout', new Error('Connection terminated due to connection timeout')],
    ['lost connection', new Error('Connection terminated unexpectedly')],
    ['background share timeout', new DatabaseBusyError()],
    ['too many connections', pgError('53300')],
    ['statement timeout', pgError('57014')],
    ['starting up', pgError('57P03')],
    ['wrapped by TypeORM', Object.assign(new Error('query failed'), { driverError: { code: '53300' } })],
    [
      'refused while it restarts',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['terminated by administrator', pgError('57P01')],
    ['crash shutdown', pgError('57P02')],
    ['read-only after failover', pgError('25006')],
    [
      'not queryable after an error',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['lost connection of a long piece of work', new DatabaseConnectionLostError(new Error('gone'))],
    [
      'refused on every address (AggregateError)',
      Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''), {}),
    ],
    ['wrapped as a cause', new Error('outer', { cause: pgError('57P01') })],
  ])('%s → busy', (_name, error) => {
    expect(isDatabaseBusy(error)).toBe(true);
  });

  it.each([
    ['unique violation', pgError('23505')],
    ['syntax error', pgError('42601')],
    ['plain error', new Error('boom')],
    ['check violation', Object.assign(new Error('x'), { driverError: { code: '23514' } })],
    [
      'a cycle of causes',
      (() => {
        const e = new Error('loop') as Error & { cause?: unknown };
        e.cause = e;
        return e;
      })(),
    ],
    ['not an error', 'timeout exceeded when trying to connect'],
  ])('%s → not busy', (_name, error) => {
    expect(isDatabaseBusy(error)).toBe(false);
  });
});

describe(isConnectionLost.name, () => {
  it.each([
    ['terminated by administrator', pgError('57P01'), true],
    ['socket reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    ['end of connection', new Error('Connection terminated unexpectedly'), true],
    ['the held connection’s own error', new DatabaseConnectionLostError(new Error('x')), true],
    // Overloaded, not lost: the same connection still works.
    ['statement timeout', pgError('57014'), false],
    ['deadlock', pgError('40P01'), false],
    ['pool acquire timeout', new Error('timeout exceeded when trying to connect'), false],
  ])('%s → %s', (_name, error, lost) => {
    expect(isConnectionLost(error)).toBe(lost);
  });
});
