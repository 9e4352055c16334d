import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderRetriesDoc } from './retries/retries-doc';
import { defaultRetriesConfig } from './retries/retries.bundle';

/** Where `npm run docs:retries` writes the page (from the repository root). */
export const RETRIES_DOC_PATH = 'docs/RETRIES.md';

/**
 * `npm run docs:retries [-- <path>]`: renders docs/RETRIES.md from the modules' retry descriptions with the
 * defaults of every config class (never from this shell's environment, so the page is the same on every machine).
 */
export function writeRetriesDoc(path: string = RETRIES_DOC_PATH): string {
  const target = resolve(path);
  writeFileSync(target, renderRetriesDoc(defaultRetriesConfig()));
  return target;
}

if (require.main === module) {
  const written = writeRetriesDoc(process.argv[2]);
  process.stdout.write(`wrote ${written}\n`);
}
