import * as https from 'node:https';
import { describe, expect, it } from 'vitest';
import { SenderAgents } from './sender-agents';

const v4 = (address: string) => ({ address, family: 4 as const });

describe(SenderAgents.name, () => {
  it('one agent per origin and checked address: another address or origin is another agent', () => {
    const sut = new SenderAgents();
    const url = new URL('https://hooks.example.com/a');
    const agent = sut.agentFor(url, v4('203.0.113.1'));

    expect(sut.agentFor(new URL('https://hooks.example.com/b?t=1'), v4('203.0.113.1'))).toBe(agent);
    expect(agent).toBeInstanceOf(https.Agent);
    expect(sut.agentFor(url, v4('203.0.113.2'))).not.toBe(agent);
    expect(sut.agentFor(new URL('https://hooks.example.com:8443/a'), v4('203.0.113.1'))).not.toBe(agent);
    expect(sut.agentFor(new URL('http://hooks.example.com/a'), v4('203.0.113.1'))).not.toBe(agent);
    expect(sut.size).toBe(4);
    sut.destroy();
    expect(sut.size).toBe(0);
  });

  it('keeps at most its bound, dropping the least recently used', () => {
    const sut = new SenderAgents(2);
    const url = new URL('https://hooks.example.com/');
    const a = sut.agentFor(url, v4('203.0.113.1'));
    const b = sut.agentFor(url, v4('203.0.113.2'));
    expect(sut.agentFor(url, v4('203.0.113.1'))).toBe(a);

    sut.agentFor(url, v4('203.0.113.3'));

    expect(sut.size).toBe(2);
    expect(sut.agentFor(url, v4('203.0.113.1'))).toBe(a);
    expect(sut.agentFor(url, v4('203.0.113.2'))).not.toBe(b);
    sut.destroy();
  });
});
