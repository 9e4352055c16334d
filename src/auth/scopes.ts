/**
 * Scopes a client key can hold. `admin` implies every other scope (sync control and key
 * management are operator powers; an operator can already mint any key), so the bootstrap and demo
 * admin keys work on every route. Ownership is separate: admin does NOT see other clients' records.
 */
export const SCOPES = [
  'catalog:read',
  'listings:write',
  'orders:write',
  'transactions:write',
  'webhooks:write',
  'watches:write',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Does a client holding `held` satisfy a route that requires `required`? */
export function grants(held: readonly Scope[], required: Scope): boolean {
  return held.includes(required) || held.includes('admin');
}

/** Parses `a,b c` into distinct known scopes; throws on an unknown one or an empty list. */
export function parseScopeList(text: string): Scope[] {
  const items = [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = items.filter((s) => !isScope(s));
  if (unknown.length > 0)
    throw new Error(`unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  if (items.length === 0) throw new Error(`at least one scope is required (known: ${SCOPES.join(', ')})`);
  return items as Scope[];
}
