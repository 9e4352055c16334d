import { isIP } from 'node:net';
import { bareHost, type AddressPolicy } from './address.policy';

export const MAX_URL_LENGTH = 2048;

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopbackHost(host: string): boolean {
  const bare = bareHost(host);
  if (LOOPBACK_NAMES.has(bare.toLowerCase()) || bare.toLowerCase().endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/**
 * The problems of an endpoint URL at registration ([] when acceptable): an absolute `https://` URL without
 * credentials (they would ride along in every request and the delivery log); `http://` only to a loopback host
 * and only outside production (local receivers); an IP literal the address policy refuses is refused here
 * already. Host names are checked again at every send, on what they resolve to then (WebhookSender).
 */
export function endpointUrlProblems(raw: string, policy: AddressPolicy): string[] {
  if (raw.length > MAX_URL_LENGTH) return [`url must be at most ${MAX_URL_LENGTH} characters`];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ['url must be an absolute URL'];
  }
  const problems: string[] = [];
  if (url.protocol === 'http:') {
    if (policy.production) problems.push('url must use https');
    else if (!isLoopbackHost(url.hostname))
      problems.push('url must use https (http only to a loopback host)');
  } else if (url.protocol !== 'https:') problems.push('url must use https');
  if (url.username || url.password) problems.push('url must not contain credentials');
  if (url.hostname === '') problems.push('url must name a host');
  const literal = bareHost(url.hostname);
  if (isIP(literal) !== 0) {
    const refusal = policy.refusal(literal);
    if (refusal) problems.push(`url must not point to ${refusal.replace(/^\S+ is /, '')}`);
  } else if (policy.production && isLoopbackHost(url.hostname))
    problems.push('url must not point to loopback');
  return problems;
}
