import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runProcess } from '../process-runner.js';
import type { BwrapSandbox } from './sandbox-spec.js';

// Why commands cannot run, and what the operator does about it.
export interface SandboxProblem {
  reason: string;
  fix: string;
}

const INSTALL_FIX =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) and restart, or point SANDBOX_BWRAP_PATH at it';
const USERNS_FIX =
  'allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0); in Docker, start the container with the security options of docker-compose.yml';

// The binary must be the one the operator installed: an absolute path, a regular executable file, not
// setuid (the setuid build runs as root and skips user namespaces), and writable by nobody but root (or
// the service's own user), since whoever can replace it runs every command outside any sandbox.
export async function inspectBwrap(bwrapPath: string): Promise<{ version: string; disableUserns: boolean } | SandboxProblem> {
  let info;
  try {
    info = await stat(bwrapPath);
  } catch {
    return { reason: `bubblewrap is not installed (${bwrapPath} does not exist)`, fix: INSTALL_FIX };
  }
  if (!info.isFile() || (info.mode & 0o111) === 0) {
    return { reason: `${bwrapPath} is not an executable file`, fix: INSTALL_FIX };
  }
  if (info.mode & 0o4000) {
    return { reason: `${bwrapPath} is setuid root`, fix: `use the non-setuid bubblewrap build (chmod u-s ${bwrapPath})` };
  }
  const serviceUid = process.getuid?.() ?? 0;
  if (info.mode & 0o022 || (info.uid !== 0 && info.uid !== serviceUid)) {
    return {
      reason: `${bwrapPath} can be replaced by another user`,
      fix: `make it owned by root and not group- or world-writable (chown root:root; chmod 755 ${bwrapPath})`,
    };
  }
  try {
    const { stdout } = await promisify(execFile)(bwrapPath, ['--version'], { timeout: 5000, env: {} });
    const version = /(\d+)\.(\d+)\.(\d+)/.exec(stdout);
    if (!version)
      return { reason: `${bwrapPath} --version printed ${JSON.stringify(stdout.trim())}, not bubblewrap's version`, fix: INSTALL_FIX };
    const [major, minor] = [Number(version[1]), Number(version[2])];
    return { version: version[0], disableUserns: major > 0 || minor >= 8 };
  } catch (err) {
    return { reason: `${bwrapPath} --version failed: ${(err as Error).message.split('\n')[0]}`, fix: INSTALL_FIX };
  }
}

const CANARY = 'TOOLGATE_SANDBOX_CANARY';
const PROBE_MEMORY_BYTES = 64 * 1024 * 1024;
// Everything the sandbox promises that one command can check: who it runs as, that the service's
// environment is out of reach (the canary), that only loopback exists, that the workspace is writable.
const PROBE_SCRIPT = [
  'id -u',
  `cat /proc/1/environ /proc/self/environ | tr '\\0' '\\n'`,
  'echo ---',
  'tail -n +3 /proc/net/dev',
  'echo ---',
  'echo written > probe-file && cat probe-file',
].join('; ');

// Runs one command through the full profile, with a fresh canary in the service's own environment.
export async function probeSandbox(spec: BwrapSandbox): Promise<SandboxProblem | undefined> {
  const canary = randomBytes(16).toString('hex');
  const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'toolgate-sandbox-probe-')));
  process.env[CANARY] = canary;
  try {
    await chmod(workspace, 0o755);
    if (spec.runAs) await chown(workspace, spec.runAs.uid, spec.runAs.gid);
    const result = await runProcess({
      argv: ['sh', '-c', PROBE_SCRIPT],
      executable: '/bin/sh',
      workspace,
      cwd: workspace,
      timeoutMs: 10_000,
      maxOutputBytes: 64 * 1024,
      limits: { maxProcesses: 16 },
      // Inside a cgroup of its own when commands get one: the probe then proves that step too.
      memoryBytes: spec.cgroup ? PROBE_MEMORY_BYTES : undefined,
      sandbox: spec,
    });
    return judge(result.exitCode, result.stdout, result.stderr, canary);
  } catch (err) {
    return { reason: `the sandbox could not start a command: ${(err as Error).message.replace(/\.$/, '')}`, fix: USERNS_FIX };
  } finally {
    delete process.env[CANARY];
    await rm(workspace, { recursive: true, force: true });
  }
}

function judge(exitCode: number | null, stdout: string, stderr: string, canary: string): SandboxProblem | undefined {
  const fix = `${USERNS_FIX}; check that SANDBOX_BWRAP_PATH is bubblewrap`;
  if (stdout.includes(canary)) return { reason: "the probe command could read the service's environment", fix };
  if (exitCode !== 0) return { reason: `the probe command failed (exit ${exitCode}): ${stderr.trim().slice(0, 300)}`, fix };
  const [identity = '', interfaces = '', written = ''] = stdout.split('---\n');
  if (identity.split('\n', 1)[0]?.trim() === '0')
    return { reason: 'the probe command ran as root', fix: 'set SANDBOX_UID and SANDBOX_GID to an unprivileged uid and gid' };
  const names = interfaces
    .split('\n')
    .map((line) => line.split(':')[0]?.trim())
    .filter(Boolean);
  if (names.some((name) => name !== 'lo')) return { reason: `the sandbox can reach network interfaces (${names.join(', ')})`, fix };
  if (written.trim() !== 'written') return { reason: 'the probe command could not write its workspace', fix };
  return undefined;
}
