import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { declaredVariables } from '../../src/config/validate-env';

/**
 * Every exported config class of src/config/*.config.ts that declares variables (a new class is picked up
 * without touching the tests that walk them: the retries doc and DEPLOY.md's environment table).
 */
export async function configClasses(): Promise<[string, new () => object][]> {
  const dir = resolve('src/config');
  const classes: [string, new () => object][] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.config.ts'))) {
    const exported = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(exported)) {
      if (typeof value !== 'function' || !/^class\s/.test(Function.prototype.toString.call(value))) continue;
      const cls = value as new () => object;
      if (declaredVariables(cls).length > 0) classes.push([cls.name, cls]);
    }
  }
  return classes;
}
