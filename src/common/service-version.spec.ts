import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVICE_VERSION } from './service-version';

describe('SERVICE_VERSION', () => {
  it("is package.json's version", () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(SERVICE_VERSION).toBe(pkg.version);
  });
});
