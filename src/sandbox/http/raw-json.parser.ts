/**
 * A JSON number token that is not a plain safe integer (fraction, exponent, or beyond ±2^53-1). Kept as its
 * source text so validation can reject it instead of accepting a value JSON.parse has already rounded.
 */
export class RawJsonNumber {
  constructor(readonly text: string) {}
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const MAX_DEPTH = 64;

/**
 * Strict RFC 8259 parser for request bodies. Differences from JSON.parse, all deliberate:
 * numbers that are not safe integers become RawJsonNumber, objects have a null prototype (no `__proto__`
 * games) and a repeated key is a syntax error rather than "last one wins".
 */
export function parseRawJson(text: string): unknown {
  const parser = new Parser(text);
  const value = parser.value(0);
  parser.skipWhitespace();
  if (parser.pos !== text.length) throw new JsonSyntaxError('unexpected trailing content', parser.pos);
  return value;
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  skipWhitespace(): void {
    WHITESPACE.lastIndex = this.pos;
    WHITESPACE.test(this.text);
    this.pos = WHITESPACE.lastIndex;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError('nesting too deep', this.pos);
    this.skipWhitespace();
    const ch = this.text[this.pos];
    if (ch === '{') return this.object(depth);
    if (ch === '[') return this.array(depth);
    if (ch === '"') return this.string();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return this.number();
    for (const [word, result] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return result;
      }
    }
    throw new JsonSyntaxError('unexpected token', this.pos);
  }

  private expect(ch: string): void {
    this.skipWhitespace();
    if (this.text[this.pos] !== ch) throw new JsonSyntaxError(`expected '${ch}'`, this.pos);
    this.pos++;
  }

  private object(depth: number): Record<string, unknown> {
    const result = Object.create(null) as Record<string, unknown>;
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"') throw new JsonSyntaxError('expected a key', this.pos);
      const keyAt = this.pos;
      const key = this.string();
      if (Object.hasOwn(result, key)) throw new JsonSyntaxError(`duplicate key "${key}"`, keyAt);
      this.expect(':');
      result[key] = this.value(depth + 1);
      this.skipWhitespace();
      const sep = this.text[this.pos++];
      if (sep === '}') return result;
      if (sep !== ',') throw new JsonSyntaxError("expected ',' or '}'", this.pos - 1);
    }
  }

  private array(depth: number): unknown[] {
    const result: unknown[] = [];
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value(depth + 1));
      this.skipWhitespace();
      const sep = this.text[this.pos++];
      if (sep === ']') return result;
      if (sep !== ',') throw new JsonSyntaxError("expected ',' or ']'", this.pos - 1);
    }
  }

  private string(): string {
    const start = this.pos;
    let end = start + 1;
    let simple = true;
    for (;;) {
      if (end >= this.text.length) throw new JsonSyntaxError('unterminated string', start);
      const code = this.text.charCodeAt(end);
      if (code === 0x22) break;
      if (code === 0x5c) {
        simple = false;
        end += 2;
        continue;
      }
      if (code < 0x20) simple = false;
      end++;
    }
    this.pos = end + 1;
    if (simple) return this.text.slice(start + 1, end);
    try {
      // Escapes and control characters are JSON.parse's job; it is exact for strings.
      return JSON.parse(this.text.slice(start, end + 1)) as string;
    } catch {
      throw new JsonSyntaxError('invalid string', start);
    }
  }

  private number(): number | RawJsonNumber {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (match === null) throw new JsonSyntaxError('invalid number', this.pos);
    const token = match[0];
    this.pos = NUMBER.lastIndex;
    const next = this.text[this.pos];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) throw new JsonSyntaxError('invalid number', this.pos);
    if (match[1] === undefined && match[2] === undefined) {
      const value = Number(token);
      if (Number.isSafeInteger(value)) return value;
    }
    return new RawJsonNumber(token);
  }
}
