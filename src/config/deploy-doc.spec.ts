import { readFileSync } from 'node:fs';
import { configClasses } from '../../test/support/config-classes';
import { beforeAll, describe, expect, it } from 'vitest';
import { declaredVariables } from './validate-env';

/** The `## Environment` section of docs/DEPLOY.md: up to the next second-level heading. */
function environmentSection(doc: string): string {
  const start = doc.indexOf('\n## Environment\n');
  if (start < 0) return '';
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

describe('docs/DEPLOY.md environment table', () => {
  const section = environmentSection(readFileSync('docs/DEPLOY.md', 'utf8'));
  // A table row per variable: its name, in backticks, is the first cell.
  const documented = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` +\|/gm)].map((m) => m[1]);
  // Every config class (the service validates them all at boot: config/service-config.ts).
  let classes: [string, new () => object][] = [];
  beforeAll(async () => {
    classes = await configClasses();
  });

  it('reads at least the known config classes', () => {
    expect(classes.map(([name]) => name)).toEqual(
      expect.arrayContaining(['AppConfig', 'AuthConfig', 'UpstreamConfig', 'SandboxEnv', 'WebhooksConfig']),
    );
  });

  it('has a row for every variable a config class reads', () => {
    const missing = classes.flatMap(([name, cls]) =>
      declaredVariables(cls)
        .filter((variable) => !documented.includes(variable))
        .map((variable) => `${name}.${variable}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no row for a variable no config class reads, and one row per variable', () => {
    const declared = classes.flatMap(([, cls]) => declaredVariables(cls));
    expect(documented.filter((name) => !declared.includes(name))).toEqual([]);
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });
});
