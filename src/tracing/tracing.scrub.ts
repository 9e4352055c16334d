import type { Attributes, AttributeValue } from '@opentelemetry/api';

/**
 * Attributes that never leave the process, whoever set them (an instrumentation, a future option):
 * captured header values, the user agent (a header value the caller chose), query strings on their own,
 * bodies and bound SQL parameter values.
 */
const DROPPED: readonly RegExp[] = [
  /^http\.(request|response)\.header\./,
  /^http\.user_agent$/,
  /^user_agent\./,
  /^url\.query$/,
  /body/i,
  /^db\.(query\.parameter|postgresql\.values|statement\.parameters)/,
];

/** A URL or a path: everything from `?` or `#` on is dropped, and so is any user:password@. */
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/)/i;

/** SQL text: statements whose values are inlined (common/prepared-statements.ts EXECUTE …) carry them as literals. */
const SQL_TEXT = /^db\.(query\.text|statement)$/;
/** A quoted SQL string literal ('' escapes a quote inside it). */
const SQL_STRING = /'(?:[^']|'')*'/g;

function scrubValue(key: string, value: AttributeValue): AttributeValue {
  if (typeof value !== 'string') return value;
  if (SQL_TEXT.test(key)) return value.replace(SQL_STRING, "'?'");
  if (!URL_LIKE.test(value)) return value;
  const cut = value.search(/[?#]/);
  const bare = cut === -1 ? value : value.slice(0, cut);
  return bare.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

/**
 * The attributes as they may be exported (docs/tracing.md, "never recorded"): dropped keys removed, every
 * string literal of SQL text replaced by '?', and every URL or path value without its query string, fragment
 * or credentials. The upstream's
 * purchase-status lookup carries the purchase's idempotency key in its query; inbound paths never carry
 * secrets, but a caller could put one in a query string.
 */
export function scrubAttributes(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || DROPPED.some((pattern) => pattern.test(key))) continue;
    out[key] = scrubValue(key, value);
  }
  return out;
}

/** Attributes that hold a request's path (and query): old and stable HTTP semantic conventions. */
const PATH_KEYS = ['url.path', 'http.target'] as const;
/** Attributes that hold a whole URL. */
const FULL_URL_KEYS = ['url.full', 'http.url'] as const;

/** The scheme, host and port of a URL (never a path or credentials); undefined when it is not a URL. */
function originOf(value: string): string | undefined {
  try {
    const { origin } = new URL(value);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * An HTTP span's attributes with no concrete path (issue 31 item 7): paths carry user subjects
 * (`/v1/transactions/users/alice/…`, `/wallets/users/alice/signatures`) and webhook receivers' tokens.
 * Outgoing (`client`): only the origin (`url.full`/`http.url` → `http://host:port`, no `url.path`/`http.target`);
 * the `upstream <operation>` span above an upstream call carries its route template. Incoming (`server`): the
 * templated route (`http.route`, `/v1/orders/:id`; `unmatched` before routing) in place of the path, and in the
 * full URL after the origin.
 */
export function templateHttpPaths(kind: 'server' | 'client', attributes: Attributes): Attributes {
  const out: Attributes = { ...attributes };
  const route = typeof out['http.route'] === 'string' ? out['http.route'] : 'unmatched';
  for (const key of PATH_KEYS) {
    if (!(key in out)) continue;
    if (kind === 'client') delete out[key];
    else out[key] = route;
  }
  for (const key of FULL_URL_KEYS) {
    const value = out[key];
    if (typeof value !== 'string') continue;
    const origin = originOf(value);
    if (origin === undefined) delete out[key];
    else out[key] = kind === 'client' ? origin : `${origin}${route}`;
  }
  return out;
}
