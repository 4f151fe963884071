import { RunRefused } from './run-refused.js';
import { SAFE_PATH_DIRS } from './executable-allowlist.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Loader and interpreter hooks that run code of the caller's choosing in every process started.
// PATH stays ours: it is the one argv[0] was resolved against.
const REFUSED = new Set(['NODE_OPTIONS', 'PATH', 'BASH_ENV', 'ENV', 'GCONV_PATH']);
const REFUSED_PREFIXES = ['LD_', 'DYLD_'];

export function validateEnv(env: Record<string, string>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!NAME.test(name)) {
      throw new RunRefused('invalid_env', `Environment variable name ${JSON.stringify(name)} is not a valid name.`, {
        name,
      });
    }
    const upper = name.toUpperCase();
    if (REFUSED.has(upper) || REFUSED_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
      throw new RunRefused('invalid_env', `Environment variable ${name} may not be set for a command.`, { name });
    }
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new RunRefused('invalid_env', `Environment variable ${name} must be a string without NUL bytes.`, { name });
    }
  }
}

// Built from nothing rather than filtered from process.env, so no service secret can leak through.
export function buildChildEnv(dirs: { home: string; tmp: string }, env: Record<string, string> = {}): Record<string, string> {
  validateEnv(env);
  return {
    PATH: SAFE_PATH_DIRS.join(':'),
    HOME: dirs.home,
    LANG: 'C.UTF-8',
    TMPDIR: dirs.tmp,
    ...env,
  };
}
