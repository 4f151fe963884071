import { RE2JS } from 're2js';
import { badRequest } from '../../common/errors/app-error.js';

// A path filter written as a glob: `*` and `?` stay within one path segment, `**` spans segments
// (`**/` may match none), `[abc]`, `[!abc]` and `{ts,tsx}` as in a shell. A glob without '/' matches the
// entry's name at any depth (`*.ts`); with '/', the path relative to the directory searched or listed.
// Compiled to RE2, so matching is linear in the path whatever the glob.
export interface PathGlob {
  matches(relativePath: string, name: string): boolean;
}

const MAX_GLOB_CHARS = 1024;

export function compileGlob(glob: string): PathGlob {
  if (glob.length > MAX_GLOB_CHARS) throw invalidGlob(glob, `it is longer than ${MAX_GLOB_CHARS} characters`);
  const source = globToRegExp(glob.startsWith('./') ? glob.slice(2) : glob);
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^${source}$`, RE2JS.DOTALL);
  } catch {
    throw invalidGlob(glob, 'it does not form a valid pattern');
  }
  const byName = !glob.includes('/');
  return { matches: (relativePath, name) => re.matches(byName ? name : relativePath) };
}

function globToRegExp(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const segmentStart = i === 0 || glob[i - 1] === '/';
        i++;
        if (segmentStart && glob[i + 1] === '/') {
          // `**/`: any number of whole segments, none included.
          out += '(?:[^/]*/)*';
          i++;
        } else {
          out += '.*';
        }
      } else {
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) throw invalidGlob(glob, "a '[' has no closing ']'");
      let body = glob.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body.replaceAll('\\', '\\\\').replaceAll('[', '\\[')}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) {
      out += '|';
    } else if (c === '\\' && i + 1 < glob.length) {
      out += RE2JS.quote(glob[++i]);
    } else {
      out += RE2JS.quote(c);
    }
  }
  if (braces > 0) throw invalidGlob(glob, "a '{' has no closing '}'");
  return out;
}

const invalidGlob = (glob: string, reason: string) =>
  badRequest('invalid_glob', `Invalid glob '${glob.slice(0, 160)}': ${reason}; write it like '**/*.ts' or 'src/*.{ts,tsx}'`, {
    glob: glob.slice(0, 160),
  });
