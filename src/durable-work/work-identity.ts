import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Injectable } from '@nestjs/common';

/**
 * This process's name in leases, audit rows and logs (`host:pid:random`): one per process, built once. It says
 * who holds a lease; it never fences anything: the fencing token does (one per claim, lease.sql.ts).
 */
@Injectable()
export class WorkIdentity {
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
