import { describe, expect, it } from 'vitest';
import { AddressPolicy } from './address.policy';
import { endpointUrlProblems } from './endpoint-url';

describe(endpointUrlProblems.name, () => {
  const development = new AddressPolicy(false);
  const production = new AddressPolicy(true);

  it.each([
    'https://hooks.example.com/bff',
    'https://hooks.example.com:8443/a?b=c',
    'https://93.184.216.34/x',
  ])('accepts %s everywhere', (url) => {
    expect(endpointUrlProblems(url, development)).toEqual([]);
    expect(endpointUrlProblems(url, production)).toEqual([]);
  });

  it.each([
    'http://127.0.0.1:4000/hooks',
    'http://localhost:4000/',
    'http://[::1]:4000/',
    'https://127.0.0.1/',
  ])('accepts the loopback receiver %s outside production only', (url) => {
    expect(endpointUrlProblems(url, development)).toEqual([]);
    expect(endpointUrlProblems(url, production)).not.toEqual([]);
  });

  it.each([
    ['http://hooks.example.com/', /https/],
    ['http://10.0.0.5/', /https/],
    ['ftp://hooks.example.com/', /https/],
    ['not a url', /absolute URL/],
    ['/relative', /absolute URL/],
    ['https://user:pw@hooks.example.com/', /credentials/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['http://169.254.169.254/', /link-local/],
    ['https://[fe80::1]/', /link-local/],
    ['https://[::ffff:169.254.169.254]/', /link-local/],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, /at most 2048/],
  ])('refuses %s', (url, problem) => {
    expect(endpointUrlProblems(url, development).join('; ')).toMatch(problem);
    expect(endpointUrlProblems(url, production).join('; ')).toMatch(problem);
  });
});
