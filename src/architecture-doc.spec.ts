import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DOC = 'docs/ARCHITECTURE.md';
const doc = readFileSync(DOC, 'utf8');

/** Every repository path the page names in backticks (src/, test/, migrations/, docs/, scripts/, bench/). */
function namedPaths(text: string): string[] {
  const paths = [...text.matchAll(/`((?:src|test|migrations|docs|scripts|bench)\/[^`\s]+)`/g)].map(
    (m) => m[1],
  );
  return [...new Set(paths)];
}

/** The section under a `## ` heading that starts with `title`. */
function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}`);
  if (start < 0) throw new Error(`no section "${title}" in ${DOC}`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The numbered steps of a section: each `N. …` line with its continuation lines. */
function steps(text: string): string[] {
  return text
    .split(/\n(?=\d+\. )/)
    .slice(1)
    .map((s) => s.split('\n\n')[0]);
}

describe('docs/ARCHITECTURE.md', () => {
  it('names only files and folders that exist', () => {
    const paths = namedPaths(doc);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(p))).toEqual([]);
  });

  it('lists every module folder of src/ in its modules table, and only folders that exist', () => {
    const listed = [...section('Modules').matchAll(/^\| `([\w-]+)\/`/gm)].map((m) => m[1]);
    const folders = readdirSync('src', { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(listed.sort()).toEqual(folders.sort());
  });

  it('names a file for every mechanism', () => {
    const rows = section('Named mechanisms')
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| mechanism') && !l.startsWith('| ---'));
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => namedPaths(r).length === 0)).toEqual([]);
  });

  it('follows one purchase in at most 25 numbered steps, each naming its file', () => {
    const purchase = steps(section('One purchase'));
    expect(purchase.length).toBeGreaterThan(10);
    expect(purchase.length).toBeLessThanOrEqual(25);
    expect(purchase.map((s, i) => s.startsWith(`${i + 1}. `))).not.toContain(false);
    expect(purchase.filter((s) => namedPaths(s).length === 0)).toEqual([]);
  });

  it('gives each table the owner scripts/check-deps.mjs enforces (TABLE_OWNERS)', () => {
    const script = readFileSync('scripts/check-deps.mjs', 'utf8');
    const map = /const TABLE_OWNERS = \{([^}]*)\}/.exec(script)?.[1] ?? '';
    const owners = [...map.matchAll(/(\w+): '([\w-]+)'/g)].map(([, table, owner]) => `${table}→${owner}`);
    expect(owners.length).toBeGreaterThan(15);
    const documented = section('Tables')
      .split('\n')
      .filter((l) => /^\| `[\w-]+\/`/.test(l))
      .flatMap((l) => {
        const [module, tables] = l.split('|').slice(1, 3);
        const owner = /`([\w-]+)\/`/.exec(module)?.[1];
        return [...tables.matchAll(/`(\w+)`/g)]
          .map(([, t]) => t)
          .filter((t) => t !== 'durable_work_token_seq')
          .map((t) => `${t}→${owner}`);
      });
    expect(documented.sort()).toEqual(owners.sort());
  });
});
