import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  heapLimitMb,
  heapWarnings,
  SERVICE_HEAP_LIMIT_MB,
  SERVICE_NODE_FLAGS,
  startedWithoutHeapLimit,
} from './node-flags';

const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** heap_size_limit, in MB, of a node started with these options. */
function limitOf(flags: readonly string[]): number {
  const result = spawnSync(
    process.execPath,
    [...flags, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  return heapLimitMb(Number(result.stdout));
}

describe('SERVICE_NODE_FLAGS', () => {
  it.each(['start', 'start:dev', 'bench'])('are what `npm run %s` passes to node', (name) => {
    const command = scripts[name];
    const node = command.slice(command.lastIndexOf('node '));
    for (const flag of SERVICE_NODE_FLAGS) expect(node).toContain(` ${flag} `);
  });

  it('are the replica command docs/DEPLOY.md gives', () => {
    const deploy = readFileSync('docs/DEPLOY.md', 'utf8');
    expect(deploy).toContain(`node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/main.js`);
  });

  it('give node a heap limit startedWithoutHeapLimit accepts, and a larger limit one it warns of', () => {
    const capped = limitOf(SERVICE_NODE_FLAGS);
    expect(capped).toBeGreaterThanOrEqual(SERVICE_HEAP_LIMIT_MB);
    expect(startedWithoutHeapLimit(capped)).toBe(false);
    // No flag means a quarter of the host's memory (up to 4 GiB): on a small host that can be under 1 GiB.
    expect(startedWithoutHeapLimit(limitOf(['--max-old-space-size=2048']))).toBe(true);
  });
});

describe(startedWithoutHeapLimit.name, () => {
  it('accepts the limit and smaller ones, and warns of a larger one', () => {
    expect(startedWithoutHeapLimit(SERVICE_HEAP_LIMIT_MB + 48)).toBe(false);
    expect(startedWithoutHeapLimit(512)).toBe(false);
    expect(startedWithoutHeapLimit(2048)).toBe(true);
    expect(startedWithoutHeapLimit(4144)).toBe(true);
  });
});

describe(heapLimitMb.name, () => {
  it('rounds bytes to whole MB', () => {
    expect(heapLimitMb(1072 * 2 ** 20 + 300_000)).toBe(1072);
    expect(heapLimitMb(0)).toBe(0);
  });
});

describe(heapWarnings.name, () => {
  const MIB = 2 ** 20;

  it('is empty for the service started as npm start does, with the default cache', () => {
    expect(heapWarnings(limitOf(SERVICE_NODE_FLAGS), 64 * MIB)).toEqual([]);
  });

  it('names the missing node option and the limit it found', () => {
    const [warning, ...rest] = heapWarnings(4144, 64 * MIB);
    expect(rest).toEqual([]);
    expect(warning).toContain(SERVICE_NODE_FLAGS.join(' '));
    expect(warning).toContain('4144 MB');
  });

  it('names a cache over a quarter of the limit, and not one at a quarter', () => {
    expect(heapWarnings(1072, 268 * MIB)).toEqual([]);
    const [warning] = heapWarnings(1072, 269 * MIB);
    expect(warning).toContain('LISTINGS_CACHE_MAX_BYTES (269 MB)');
    expect(heapWarnings(4144, 2048 * MIB)).toHaveLength(2);
  });
});
