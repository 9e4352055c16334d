import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import { describe, expect, it, vi, type Mock } from 'vitest';
import { holdConnection } from './held-connection';
import { DatabaseConnectionLostError } from './pool-gate';

/** A pg client as pg-pool hands it out: an emitter with a `release`. */
type Release = (destroy?: boolean) => void;

function fakePool(): { pool: Pool; client: EventEmitter & { release: Mock<Release> } } {
  const client = Object.assign(new EventEmitter(), { release: vi.fn<Release>() });
  return { pool: { connect: () => Promise.resolve(client) } as unknown as Pool, client };
}

describe(holdConnection.name, () => {
  it('turns the client’s error event into `lost` (once) instead of an uncaught exception', async () => {
    const { pool, client } = fakePool();
    const onLost = vi.fn<(error: DatabaseConnectionLostError) => void>();
    const sut = await holdConnection(pool, onLost);
    const terminated = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    // Without a listener this emit throws: the process would die.
    expect(() => client.emit('error', terminated)).not.toThrow();
    client.emit('error', new Error('Connection terminated unexpectedly'));
    expect(sut.lost).toBeInstanceOf(DatabaseConnectionLostError);
    expect(sut.lost?.reason).toBe(terminated);
    expect(onLost).toHaveBeenCalledTimes(1);
    sut.release();
    // A lost client is destroyed, never parked back in the pool.
    expect(client.release).toHaveBeenCalledWith(true);
  });

  it('hands a healthy client back once, and stops listening after', async () => {
    const { pool, client } = fakePool();
    const sut = await holdConnection(pool);
    expect(client.listenerCount('error')).toBe(1);
    sut.release();
    sut.release(true);
    expect(client.release).toHaveBeenCalledTimes(1);
    expect(client.release).toHaveBeenCalledWith(false);
    expect(client.listenerCount('error')).toBe(0);
    expect(sut.lost).toBeNull();
  });
});
