import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

describe('npm run migration:create', () => {
  const root = resolve('.');
  const work = mkdtempSync(join(tmpdir(), 'bff-migration-create-'));
  mkdirSync(join(work, 'migrations'));
  mkdirSync(join(work, 'src/database'), { recursive: true });
  copyFileSync(join(root, 'src/database/migrations.ts'), join(work, 'src/database/migrations.ts'));
  copyFileSync(join(root, '.prettierrc.json'), join(work, '.prettierrc.json'));
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
  const create = (name: string) =>
    execFileSync(process.execPath, [join(root, 'scripts/migration-create.mjs'), name], {
      cwd: work,
      encoding: 'utf8',
    });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('writes a migration file and registers it after the existing ones, twice in a row', () => {
    const before = readFileSync(join(work, 'src/database/migrations.ts'), 'utf8');
    create('AddFirstThing');
    create('AddSecondThing');
    const files = readdirSync(join(work, 'migrations')).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^\d{13}-AddFirstThing\.ts$/);
    const registry = readFileSync(join(work, 'src/database/migrations.ts'), 'utf8');
    const listed =
      /MIGRATIONS = \[([^\]]*)\]/
        .exec(registry)?.[1]
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean) ?? [];
    const previous =
      /MIGRATIONS = \[([^\]]*)\]/
        .exec(before)?.[1]
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean) ?? [];
    expect(listed.slice(0, previous.length)).toEqual(previous);
    expect(listed.slice(previous.length).map((n) => n.replace(/\d+$/, ''))).toEqual([
      'AddFirstThing',
      'AddSecondThing',
    ]);
    expect(registry).not.toMatch(/,\s*,/);
    for (const file of files) expect(registry).toContain(`'../../migrations/${file.replace(/\.ts$/, '')}'`);
  });

  it('refuses a name that is not PascalCase', () => {
    expect(() => create('not-pascal')).toThrow(/Command failed/);
  });
});
