/**
 * A worst-case figure of a retry policy (docs/RETRIES.md): a number with the arithmetic that gives it, or null
 * when the code sets no bound (then `arithmetic` says why). Each module computes its own in `<feature>.retries.ts`.
 */
export interface Bound {
  value: number | null;
  arithmetic: string;
}

export function finite(value: number, arithmetic: string): Bound {
  return { value, arithmetic };
}

export function unbounded(why: string): Bound {
  return { value: null, arithmetic: `unbounded while ${why}` };
}

/** 1234567 → "1,234,567" (no locale: the rendered page must not depend on the machine). */
export function num(n: number): string {
  const [whole, fraction] = String(n).split('.');
  const grouped = (whole ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}
