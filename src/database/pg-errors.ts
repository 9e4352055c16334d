/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * Whether a pg error is a unique violation (SQLSTATE 23505), on `constraint` when one is named: how a writer tells
 * "another writer inserted that key first" from every other failure.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}
