import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';

// The only directories commands are looked up in; the runner gives the child this same PATH.
export const SAFE_PATH_DIRS: readonly string[] = ['/usr/local/bin', '/usr/bin', '/bin'];

// Returns the path to execute: a PATH candidate or a configured entry, never a caller-supplied
// path, so a symlink the caller controls cannot be swapped between this check and the exec.
export function resolveAllowedExecutable(argv0: string, allowlist: string[], pathDirs: readonly string[] = SAFE_PATH_DIRS): string {
  const refuse = (why: string) => refused(argv0, allowlist, why);
  if (allowlist.length === 0) throw refuse('this project allows no commands');
  if (argv0 === '' || argv0.includes('\0')) throw refuse('the command name is empty or malformed');

  const names = new Set(allowlist.filter((entry) => entry !== '' && !entry.includes('/')));
  const absolute = allowlist.filter((entry) => isAbsolute(entry));
  const matchAbsolute = (real: string | undefined) =>
    real === undefined ? undefined : absolute.find((entry) => realpathOrUndefined(entry) === real);

  // Whether argv0 could name an allowed command is decided from the names alone, before the host's file
  // system is looked at: a command outside the allow-list gets one answer whether or not such a file
  // exists, so the refusal tells nothing about the host.
  const mayBeAllowed = names.has(basename(argv0)) || absolute.some((entry) => entry === argv0 || basename(entry) === basename(argv0));
  if (!mayBeAllowed) throw refuse('it is not on the allow-list');

  if (!argv0.includes('/')) {
    const found = lookUpInPath(argv0, pathDirs);
    if (found === undefined) throw refuse('it was not found on the PATH');
    if (names.has(argv0) || matchAbsolute(realpathOrUndefined(found)) !== undefined) return found;
    throw refuse('it is not on the allow-list');
  }

  // A relative path would resolve against the workspace, where anyone can drop a `./ls`.
  if (!isAbsolute(argv0)) throw refuse('relative paths are not accepted; use the bare name or an absolute path');
  const real = realpathOrUndefined(argv0);
  if (real === undefined || !isExecutableFile(real)) throw refuse('it does not exist or is not executable');
  const entry = matchAbsolute(real);
  if (entry !== undefined) return entry;

  // `/usr/bin/ls` may stand for `ls` only when it is the very file the PATH lookup finds.
  const name = basename(argv0);
  const found = names.has(name) ? lookUpInPath(name, pathDirs) : undefined;
  if (found !== undefined && realpathOrUndefined(found) === real) return found;
  throw refuse('it is not on the allow-list');
}

function lookUpInPath(name: string, pathDirs: readonly string[]): string | undefined {
  for (const dir of pathDirs) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

// Commands (shell_exec and command skills alike) run only where the project switched them on.
export function shellDisabled(tool: string): AppError {
  return new AppError(
    403,
    'shell_disabled',
    `${tool} runs a command, and commands are not enabled for this project; an operator can enable them with shellEnabled: true and an allow-list of executables (PATCH /v1/projects/{projectId})`,
    { details: { tool } },
  );
}

function refused(argv0: string, allowlist: string[], why: string): AppError {
  const allowed = allowlist.length > 0 ? allowlist.join(', ') : '(none)';
  return new AppError(
    403,
    'command_not_allowed',
    `The command ${JSON.stringify(argv0)} is not allowed: ${why}. Allowed commands: ${allowed}.`,
    { details: { command: argv0, allowed: [...allowlist] } },
  );
}
