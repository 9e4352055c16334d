/** The resolved UpstreamOptions (resolveUpstreamOptions), one object for the client and its parts. */
export const UPSTREAM_OPTIONS = Symbol('UPSTREAM_OPTIONS');

/** How an attempt sends (http/attempt.ts `Transport`): the HttpService with the API key, in the module. */
export const UPSTREAM_TRANSPORT = Symbol('UPSTREAM_TRANSPORT');
