import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts `node dist/src/main.js` (built in global setup) and waits for its "listening" log line. */
export async function spawnService(env: Record<string, string>, timeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start in ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const poll = setInterval(() => {
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"ticket-resale-bff listening"/.exec(out);
      if (match) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(match[1]);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`service exited early with ${code}:\n${out}`));
    });
  });
  return { child, url, output: () => out };
}

export async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`process ${child.pid} still running after ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** PID of the postmaster that owns a cluster directory, or null when none is running. */
export async function postmasterPid(clusterDir: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(
      (await readFile(`${clusterDir}/postmaster.pid`, 'utf8')).split('\n')[0] ?? '',
      10,
    );
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
