import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// Whether bubblewrap can build a sandbox on this machine, checked once per test file. Where it cannot,
// the test app runs commands unsandboxed (COMMAND_SANDBOX=none) so every other suite still runs, and the
// suites about the sandbox itself are skipped with a one-line reason.
function detect(): { available: true } | { available: false; reason: string } {
  const bwrap = process.env.SANDBOX_BWRAP_PATH ?? '/usr/bin/bwrap';
  if (!existsSync(bwrap)) return { available: false, reason: `${bwrap} is missing (apt-get install bubblewrap)` };
  const asRoot = process.getuid?.() === 0;
  const probe = spawnSync(bwrap, ['--unshare-user', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
    ...(asRoot && { uid: 65534, gid: 65534 }),
  });
  if (probe.status === 0) return { available: true };
  return { available: false, reason: `bubblewrap cannot create a sandbox here (${(probe.stderr || String(probe.error)).trim()})` };
}

export const sandboxSupport = detect();

let announced = false;
function announceSkip(what: string): void {
  if (sandboxSupport.available || announced) return;
  announced = true;
  process.stderr.write(`Skipping ${what}: ${sandboxSupport.reason}\n`);
}

export function describeSandboxed(name: string, fn: () => void): void {
  announceSkip(`"${name}"`);
  (sandboxSupport.available ? describe : describe.skip)(name, fn);
}

export function itSandboxed(name: string, fn: () => Promise<void>, timeout?: number): void {
  announceSkip(`"${name}"`);
  (sandboxSupport.available ? it : it.skip)(name, fn, timeout);
}

// What the test app adds to its environment: nothing where the sandbox works.
export const sandboxTestEnv: Record<string, string> = sandboxSupport.available
  ? {}
  : { COMMAND_SANDBOX: 'none', ...(process.env.SANDBOX_BWRAP_PATH ? { SANDBOX_BWRAP_PATH: process.env.SANDBOX_BWRAP_PATH } : {}) };
