import { randomBytes } from 'node:crypto';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer, Reflector } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { declaredPolicy, type AccessPolicy } from '../../src/auth/access.decorators';
import { ApiClientsService } from '../../src/auth/api-clients.service';
import type { Scope } from '../../src/auth/scopes';
import { ANY_SUBJECT } from '../../src/auth/subject-binding';

export interface TestClient {
  id: string;
  name: string;
  key: string;
  scopes: Scope[];
}

/**
 * Issues a real key through the app's own service (as the CLI would). Unbound on purpose: fixtures opt in to
 * any subject explicitly (ANY_SUBJECT), as an operator must for a write key (tests of bindings bind their own).
 */
export async function issueTestKey(
  app: NestFastifyApplication,
  scopes: Scope[],
  name = `test-client-${randomBytes(4).toString('hex')}`,
): Promise<TestClient> {
  const issued = await app.get(ApiClientsService).issue(name, scopes, null, ANY_SUBJECT);
  return { id: issued.client.id, name, key: issued.key, scopes };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export interface NestRoute {
  method: string;
  /** Fastify path template, e.g. `/v1/admin/api-clients/:id`. */
  path: string;
  controller: string;
  handler: string;
  policy: AccessPolicy | undefined;
}

function joinPath(...parts: (string | undefined)[]): string {
  const joined = parts
    .flatMap((p) => (p ?? '').split('/'))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}

/** Every route the Nest router registered (walks every module's controllers and their handlers). */
export function nestRoutes(app: NestFastifyApplication): NestRoute[] {
  const reflector = new Reflector();
  const routes: NestRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const base = Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined;
      const proto = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const sub = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        for (const b of [base ?? ''].flat()) {
          for (const p of [sub ?? ''].flat()) {
            routes.push({
              method: RequestMethod[method],
              path: joinPath(b, p),
              controller: controller.name,
              handler: name,
              policy: declaredPolicy(reflector, handler, controller),
            });
          }
        }
      }
    }
  }
  return routes;
}

/** Fastify's own route table (every route, Nest's or not), rebuilt from printRoutes(). */
export function fastifyRoutes(app: NestFastifyApplication): { path: string; methods: string[] }[] {
  const text = app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const out: { path: string; methods: string[] }[] = [];
  for (const line of text.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    stack.length = depth;
    stack.push(match[2]);
    if (match[3]) out.push({ path: stack.join('').replace(/\/{2,}/g, '/'), methods: match[3].split(', ') });
  }
  return out;
}
