import * as http from 'node:http';
import * as https from 'node:https';
import type { ResolvedAddress } from './host.resolver';

/** Agents kept at most (one per endpoint origin and checked address); the least recently used goes first. */
export const MAX_AGENTS = 256;
/** Idle connections kept per agent (an endpoint holds at most a few sends at once: its in-flight cap). */
const MAX_FREE_SOCKETS = 8;
/**
 * An idle connection is closed after this long (Node also honours a shorter `Keep-Alive: timeout=` hint of the
 * receiver, less a second): below Node's own server default (5 s), so a typical receiver rarely closes first.
 */
export const IDLE_SOCKET_MS = 4_000;

/**
 * Keep-alive connections of the webhook sender, pooled per (endpoint origin, checked address): a send reuses a
 * connection only when the host resolved, at this send, to the address that connection was opened to and that
 * address passed the SSRF guard — the pool is keyed by the checked address, so a change of address (a rebinding DNS
 * answer) is a new connection to the new, checked one, never a reuse of the old. A connection opened per send was
 * most of a delivery's cost (docs/BENCHMARKS.md, "Webhook delivery"). Bounded: MAX_AGENTS agents (least recently
 * used destroyed first), MAX_FREE_SOCKETS idle connections each, closed after IDLE_SOCKET_MS idle.
 */
export class SenderAgents {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxAgents = MAX_AGENTS) {}

  /** The agent of `url`'s origin connected to `target` (the address this send checked). */
  agentFor(url: URL, target: ResolvedAddress): http.Agent {
    const key = `${url.protocol}//${url.host} ${target.address}`;
    const agent = this.agents.get(key);
    if (agent) {
      // Most recently used last (Map keeps insertion order).
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    const options = {
      keepAlive: true,
      maxFreeSockets: MAX_FREE_SOCKETS,
      timeout: IDLE_SOCKET_MS,
      scheduling: 'lifo' as const,
    };
    const created = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    this.agents.set(key, created);
    if (this.agents.size > this.maxAgents) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, http.Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return created;
  }

  /** Closes the idle connections of `agent` (a reused one was found closed: its siblings are as old). */
  dropIdle(agent: http.Agent): void {
    for (const sockets of Object.values(agent.freeSockets))
      for (const socket of sockets ?? []) socket.destroy();
  }

  /** Agents held now. */
  get size(): number {
    return this.agents.size;
  }

  /** Closes every connection (shutdown). */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
