import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Reading cost, checked (issue 33, docs/ARCHITECTURE.md "Size rules"): no function, method or arrow function in
 * `src/` is longer than MAX_FUNCTION_LINES, and no `src/` file is longer than MAX_FILE_LINES unless its header
 * comment (the comments above its first line of code) has a paragraph starting `One piece:` that says why it is
 * not split. Specs (`*.spec.ts`) are not counted; generated files would be (none lives in `src/`: the typed
 * client is `clients/typescript/schema.ts`), and a file whose header says `@generated` is skipped.
 */
const MAX_FUNCTION_LINES = 120;
const MAX_FILE_LINES = 300;
const MARKER = /^\s*(?:\/\/|\/?\*+)?\s*One piece: \S.{20,}/m;

/** Lines a function-like node spans, from its first token (not its JSDoc) to its last, both counted. */
function spanLines(source: ts.SourceFile, node: ts.Node): number {
  const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
  return last - first + 1;
}

function nameOf(source: ts.SourceFile, node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText(source);
  }
  if (ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/** `path:line name (N lines)` for every function-like node of `text` longer than MAX_FUNCTION_LINES. */
function longFunctions(path: string, text: string): string[] {
  if (text.split('\n').length <= MAX_FUNCTION_LINES) return []; // no function can be longer than its file
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = spanLines(source, node);
      if (lines > MAX_FUNCTION_LINES) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${path}:${line} ${nameOf(source, node)} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The comments above the first line of code (the file's header). */
function header(text: string): string {
  const ranges = ts.getLeadingCommentRanges(text, 0) ?? [];
  return ranges.map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** Whether the file's header says it is generated (its functions and its size are not judged). */
function generated(text: string): boolean {
  return /@generated\b/.test(header(text));
}

/** `path (N lines)` when `text` is longer than MAX_FILE_LINES and its header gives no `One piece:` reason. */
function unexplainedLongFile(path: string, text: string): string[] {
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  if (lines <= MAX_FILE_LINES) return [];
  const head = header(text);
  if (MARKER.test(head) || generated(text)) return [];
  return [`${path} (${lines} lines, no "One piece:" reason in its header)`];
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) yield path.split('\\').join('/');
  }
}

const lines = (n: number, line: string): string => `${line}\n`.repeat(n);
/** A function declaration spanning exactly `n` lines (n ≥ 2). */
const functionOf = (n: number): string =>
  `function f(): number {\n${lines(n - 3, '  void 0;')}  return 1;\n}\n`;
const explained =
  '/**\n * A fixture.\n *\n * One piece: one table, its hand-written SQL and nothing else.\n */\n';

describe('house size rules', () => {
  describe(longFunctions.name, () => {
    it('passes a function of 120 lines and fails one of 121', () => {
      expect(longFunctions('a.ts', functionOf(120))).toEqual([]);
      expect(longFunctions('a.ts', functionOf(121))).toEqual(['a.ts:1 f (121 lines)']);
    });

    it('judges methods, constructors and arrow functions, and counts from the first token, not the JSDoc', () => {
      const body = lines(120, '    void 0;');
      const text = [
        '/** A doc comment',
        lines(10, ' *'),
        ' */',
        'export class C {',
        `  constructor() {\n${body}  }`,
        `  m(): void {\n${body}  }`,
        `  short(): void {\n${lines(118, '    void 0;')}  }`,
        '}',
        `export const g = (): void => {\n${body}};`,
      ].join('\n');
      expect(longFunctions('b.ts', text)).toEqual([
        'b.ts:15 constructor (122 lines)',
        'b.ts:137 m (122 lines)',
        'b.ts:380 g (122 lines)',
      ]);
    });
  });

  describe(unexplainedLongFile.name, () => {
    it('passes a file of 300 lines and fails one of 301 without the reason', () => {
      expect(unexplainedLongFile('c.ts', lines(300, 'void 0;'))).toEqual([]);
      expect(unexplainedLongFile('c.ts', lines(301, 'void 0;'))).toEqual([
        'c.ts (301 lines, no "One piece:" reason in its header)',
      ]);
    });

    it('passes a long file whose header gives the reason, as a JSDoc paragraph or line comments', () => {
      expect(unexplainedLongFile('d.ts', explained + lines(301, 'void 0;'))).toEqual([]);
      const lineComments =
        '// The orders table.\n// One piece: one table, its hand-written SQL and nothing else.\n';
      expect(unexplainedLongFile('d.ts', lineComments + lines(301, 'void 0;'))).toEqual([]);
    });

    it('skips a file whose header says it is generated', () => {
      expect(unexplainedLongFile('g.ts', `// @generated by a script\n${lines(301, 'void 0;')}`)).toEqual([]);
    });

    it('does not take a reason from below the header, nor an empty one', () => {
      const below = `import { x } from './x';\n${explained}${lines(301, 'void 0;')}`;
      expect(unexplainedLongFile('e.ts', below)).toHaveLength(1);
      expect(unexplainedLongFile('e.ts', `// One piece: short\n${lines(301, 'void 0;')}`)).toHaveLength(1);
    });
  });

  it('src/ keeps them (files and functions)', () => {
    const violations = [...sourceFiles('src')].flatMap((path) => {
      const text = readFileSync(path, 'utf8');
      if (generated(text)) return [];
      return [...unexplainedLongFile(path, text), ...longFunctions(path, text)];
    });
    expect(violations).toEqual([]);
  }, 60_000); // parses every src file (about 12 s on a busy 2-core machine)
});
