import { escapeLiteral } from 'pg';

/**
 * `sql` with its parameters `$1`… written as literals, for a statement sent in one simple-protocol query with others
 * (which takes no parameters): strings and bigints as quoted literals (pg's `escapeLiteral`), finite numbers as they
 * are, null and undefined as NULL. Only for the service's own statement texts, which carry no dollar quoting; a
 * parameter the text names but `params` lacks, a non-finite number or another type is an error.
 */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)(?!\d)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= params.length) throw new Error(`SQL names $${n} but has ${params.length} parameters`);
    const value = params[index];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new Error(`parameter $${n} is not a finite number`);
      return String(value);
    }
    if (typeof value === 'string' || typeof value === 'bigint') return escapeLiteral(String(value));
    throw new Error(`parameter $${n} has type ${typeof value}`);
  });
}
