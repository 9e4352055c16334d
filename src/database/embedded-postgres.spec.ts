import { describe, expect, it } from 'vitest';
import { explainInitFailure, importEmbeddedPostgres } from './embedded-postgres';

describe('explainInitFailure', () => {
  const denied = new Error(
    'initdb: error: could not access directory "/root/x/.data/postgres": Permission denied',
  );

  it('tells a root user why the postgres user cannot reach DATA_DIR and what to set', () => {
    const sut = explainInitFailure(denied, '/root/x/.data/postgres', true);
    expect(sut.message).toContain('"postgres" user');
    expect(sut.message).toContain('DATA_DIR');
    expect(sut.message).toContain('DATABASE_URL');
  });

  it('keeps the original cause otherwise', () => {
    expect(explainInitFailure(denied, '/x', false).message).toContain('Permission denied');
    expect(explainInitFailure(new Error('disk full'), '/x', true).message).toBe(
      'embedded PostgreSQL could not initialise /x: disk full',
    );
  });
});

describe('importEmbeddedPostgres', () => {
  it('leaves no process hook of async-exit-hook behind: a failing run keeps its non-zero exit code', async () => {
    const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit', 'message'] as const;
    const before = events.map((e) => process.listenerCount(e));

    const sut = await importEmbeddedPostgres();

    expect(typeof sut).toBe('function');
    // async-exit-hook's beforeExit handler calls process.exit(0), overwriting process.exitCode = 1.
    expect(events.map((e) => process.listenerCount(e))).toEqual(before);
  });
});
