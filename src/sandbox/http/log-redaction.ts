/** Query parameter names whose values are secrets (an API key a careless client put in the URL, a token…). */
const SECRET_NAME = /key|token|secret|auth|passw|credential|signature/i;
/** Values that look like an upstream API key whatever the parameter is called. */
const SECRET_VALUE = /^trk_/i;

/**
 * The request URL as the sandbox logs it: the values of secret-looking query parameters replaced by
 * `[REDACTED]` (the contract, 5.6: keys are never logged — a client may still send one in the query string).
 */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = decodeSafely(pair.slice(0, eq));
      const value = decodeSafely(pair.slice(eq + 1));
      return SECRET_NAME.test(name) || SECRET_VALUE.test(value) ? `${pair.slice(0, eq)}=[REDACTED]` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
