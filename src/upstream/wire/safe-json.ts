import { randomBytes } from 'node:crypto';

/**
 * A JSON integer literal whose magnitude exceeds 2^53-1. JSON.parse would round it silently; safe-json
 * keeps its source text instead. The contract never sends such a number (64-bit values beyond 2^53-1 come
 * as decimal strings), so codecs refuse it; inside unknown fields kept in `raw` it serialises as its digits.
 */
export class UnsafeJsonInteger {
  constructor(readonly text: string) {}

  toJSON(): string {
    return this.text;
  }
}

export class JsonParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonParseError';
  }
}

const MAX_SAFE_DIGITS = 15;
/** Deeper than this, the exact path is taken without looking (keeps the check below off the stack limit). */
const MAX_CHECKED_DEPTH = 256;

/**
 * Whether JSON.parse's result may have lost an integer: every integer literal beyond ±(2^53-1) turns into
 * an integer-valued double beyond it, or ±Infinity (it cannot round to a safe one). False for nearly every body; one
 * pass over the parsed values, no allocation.
 */
export function mayHaveLostInteger(value: unknown, depth = 0): boolean {
  // A literal too long for a double comes out as ±Infinity, which is not an integer: caught as well.
  if (typeof value === 'number') {
    return !Number.isSafeInteger(value) && (Number.isInteger(value) || !Number.isFinite(value));
  }
  if (typeof value !== 'object' || value === null) return false;
  if (depth > MAX_CHECKED_DEPTH) return true;
  // Strings (most values of a page) are skipped in the loops, without a call each.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'string' && mayHaveLostInteger(item, depth + 1)) return true;
    }
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item !== 'string' && mayHaveLostInteger(item, depth + 1)) return true;
  }
  return false;
}

/**
 * Finds integer literals outside strings that are not safe integers and rewrites them into marked strings
 * (`"\u0000<nonce>:<digits>"`); every other byte is kept. Returns the text unchanged (same string) when no
 * literal needed it, which is the common case: the scan is one pass over the characters, no allocation.
 */
function markUnsafeIntegers(text: string, nonce: string): string {
  let out: string[] | undefined;
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string token, honouring backslash escapes.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      let integer = true;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) i++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) {
          integer = false;
          i++;
        } else break;
      }
      const token = text.slice(start, i);
      const digits = token.startsWith('-') ? token.length - 1 : token.length;
      if (integer && digits > MAX_SAFE_DIGITS && /^-?(0|[1-9][0-9]*)$/.test(token)) {
        if (!Number.isSafeInteger(Number(token))) {
          out ??= [];
          out.push(text.slice(copied, start), `"\\u0000${nonce}:${token}"`);
          copied = i;
        }
      }
      continue;
    }
    i++;
  }
  if (out === undefined) return text;
  out.push(text.slice(copied));
  return out.join('');
}

/**
 * JSON.parse without silent precision loss: integer literals beyond ±(2^53-1) become UnsafeJsonInteger
 * (Node 20 has no JSON.parse source-text access, so a tokenizer pass marks them when there are any). The marker carries
 * a random per-call nonce after a NUL, so no genuine string value can be mistaken for a marked number.
 */
export function parseJsonSafely(text: string): unknown {
  const plain = parsePlainJson(text);
  if (!mayHaveLostInteger(plain, 0)) return plain;
  return parseMarked(text, plain);
}

/**
 * JSON.parse alone, failing like parseJsonSafely (JsonParseError, same message). Exact only when no value
 * of the result may have lost an integer (mayHaveLostInteger): for parsers that check the values they visit
 * anyway in the same pass, and hand the text to parseJsonSafely when one may be lost.
 */
export function parsePlainJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonParseError(error instanceof Error ? error.message.slice(0, 120) : 'invalid JSON');
  }
}

/** The slow path of parseJsonSafely: the body parsed again with its unsafe integer literals marked. */
function parseMarked(text: string, plain: unknown): unknown {
  // The common case never comes here: nothing beyond ±(2^53-1), so JSON.parse alone was exact. Here the body
  // is parsed again with the unsafe literals marked by the tokenizer (exponents and fractions stay numbers).
  try {
    const nonce = randomBytes(8).toString('hex');
    const marker = `\u0000${nonce}:`;
    const prepared = markUnsafeIntegers(text, nonce);
    if (prepared === text) return plain;
    return JSON.parse(prepared, (_key, value: unknown) =>
      typeof value === 'string' && value.startsWith(marker)
        ? new UnsafeJsonInteger(value.slice(marker.length))
        : value,
    );
  } catch (error) {
    throw new JsonParseError(error instanceof Error ? error.message.slice(0, 120) : 'invalid JSON');
  }
}
