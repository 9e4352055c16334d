import { existsSync, readFileSync } from 'node:fs';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { describe, expect, it } from 'vitest';
import { CheckoutController } from '../checkout/checkout.controller';
import { SellingController } from '../listings/selling.controller';
import { TransactionsController } from '../transactions/transactions.controller';
import { WatchesController } from '../watches/watches.controller';
import { ACCESS_POLICY, type AccessPolicy } from './access.decorators';

const DOC = 'docs/SECURITY.md';

/** `path/to/file.ts` › "test name", "other name": every test the document cites as proof. */
function citations(doc: string): { file: string; name: string }[] {
  const cited = /`((?:src|test)\/[^`]+\.ts)`((?:\s*›\s*)?(?:"[^"]+"[^"`|;]*)*)/g;
  return [...doc.matchAll(cited)].flatMap(([, file, names]) =>
    // A cited name may wrap across lines of the Markdown source.
    [...names.matchAll(/"([^"]+)"/g)].map(([, name]) => ({ file, name: name.replace(/\s+/g, ' ') })),
  );
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Titles of `it`/`describe` as patterns. In an `.each` title a `%s` stands for one of the string
 * literals of its table (so a cited case must be a real case); a `${…}` stands for any text.
 */
function titlePatterns(source: string): RegExp[] {
  const calls = /\b(?:it|test|describe)(?:\.each\b([\s\S]*?)\)\s*)?\(\s*(['"`])((?:\\.|(?!\2)[^\\])*)\2/g;
  return [...source.matchAll(calls)].map(([, table, , title]) => {
    const cases = [...(table ?? '').matchAll(/'((?:\\.|[^'\\])*)'/g)].map(([, c]) => escapeRegExp(c));
    const placeholder = cases.length > 0 ? `(?:${cases.join('|')})` : '.+';
    const pattern = title
      .split(/(%[sdifjo#]|\$\{[^}]*\})/)
      .map((part, i) =>
        i % 2 === 0 ? escapeRegExp(part.replace(/\\(.)/g, '$1')) : part.startsWith('%') ? placeholder : '.+',
      )
      .join('');
    return new RegExp(`^${pattern}$`, 'u');
  });
}

/** `POST /v1/orders → body buyer_subject (user)` for every handler of these controllers that declares a subject. */
function declaredSubjects(controllers: (new (...args: never[]) => unknown)[]): string[] {
  const out: string[] = [];
  for (const controller of controllers) {
    const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = proto[name];
      if (typeof handler !== 'function') continue;
      const policy = Reflect.getMetadata(ACCESS_POLICY, handler) as AccessPolicy | undefined;
      if (policy?.kind !== 'scope' || !policy.subject) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      const path = `/${base}/${Reflect.getMetadata(PATH_METADATA, handler) as string}`
        .replace(/\/+$/, '')
        .replace(/:(\w+)/g, (_m, p: string) => `{${p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}}`);
      const { in: where, field, wallet } = policy.subject;
      out.push(`${method} ${path} → ${where} ${field} (${wallet})`);
    }
  }
  return out.sort();
}

describe(DOC, () => {
  const doc = readFileSync(DOC, 'utf8');

  it('cites tests as proof', () => {
    expect(citations(doc).length).toBeGreaterThan(20);
  });

  it('names only tests that exist, by their exact title', () => {
    const wrong = citations(doc).filter(({ file, name }) => {
      if (!existsSync(file)) return true;
      return !titlePatterns(readFileSync(file, 'utf8')).some((p) => p.test(name));
    });
    expect(wrong.map(({ file, name }) => `${file} › "${name}"`)).toEqual([]);
  });

  it('covers the OWASP API Security Top 10 (2023) item by item, each with a proving test', () => {
    for (let n = 1; n <= 10; n++) {
      const row = doc.split('\n').find((line) => line.startsWith(`| API${n} `));
      expect(row, `API${n} row`).toBeDefined();
      expect(row, `API${n} cites no test`).toMatch(/`(?:src|test)\/[^`]+\.ts`/);
    }
  });

  it('lists in its subject-bindings table exactly the routes that declare a subject, where and of which wallet', () => {
    const section = doc.slice(doc.indexOf('### Subject bindings'), doc.indexOf('## Pagination cursors'));
    const documented = [
      ...section.matchAll(/^\| `(\w+) ([^`]+)`[^|]*\|[^|]*\| (body|path) `(\w+)` \((\w+)\)/gm),
    ].map(([, method, path, where, field, wallet]) => `${method} ${path} → ${where} ${field} (${wallet})`);
    expect(documented.sort()).toEqual(
      declaredSubjects([CheckoutController, SellingController, TransactionsController, WatchesController]),
    );
    expect(documented).toHaveLength(6);
  });
});
