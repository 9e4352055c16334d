import { describe, expect, it } from 'vitest';
import { explainInitFailure } from './embedded-postgres';

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
