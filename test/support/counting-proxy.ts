// The counting proxy is shared with the benches (the freshness bench counts its service's requests at the wire).
export { busiestSecond, CountingProxy, type ProxiedRequest } from '../../bench/counting-proxy';
