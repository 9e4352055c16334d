import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box';

describe(SecretBox.name, () => {
  const sut = SecretBox.from(undefined, 'a-pepper-of-at-least-thirty-two-characters');

  it('opens what it sealed, and never stores the plain text', () => {
    const sealed = sut.seal('whsec_secret');

    expect(sut.open(sealed)).toBe('whsec_secret');
    expect(sealed.toString('latin1')).not.toContain('whsec_secret');
    expect(sut.seal('whsec_secret').equals(sealed)).toBe(false);
  });

  it('refuses a box sealed under another key, or altered', () => {
    const sealed = sut.seal('whsec_secret');
    const other = SecretBox.from(
      'another-key-of-at-least-thirty-two-chars',
      'a-pepper-of-at-least-thirty-two-characters',
    );
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] = (altered.at(-1) ?? 0) ^ 1;

    expect(() => other.open(sealed)).toThrow(/unable to authenticate/);
    expect(() => sut.open(altered)).toThrow(/unable to authenticate/);
  });

  it('derives the same key on every replica from the same pepper', () => {
    const replica = SecretBox.from(undefined, 'a-pepper-of-at-least-thirty-two-characters');

    expect(replica.open(sut.seal('whsec_x'))).toBe('whsec_x');
  });
});
