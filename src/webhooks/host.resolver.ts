import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Name resolution of webhook hosts, one provider so the SSRF guard's tests can answer as a rebinding DNS server
 * would. Every address of the host (the guard refuses the host when any of them is refused).
 */
@Injectable()
export class HostResolver {
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const answers = await lookup(host, { all: true, verbatim: true });
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  }
}
