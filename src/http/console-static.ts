import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The operator console: the files `npm run build` writes to dist/console (console/ holds the sources).
// From src/http (tests) and dist/http (the built service) alike, the package root is two levels up.
export const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url));
const CONSOLE_PREFIX = '/console';

// The page loads only its own scripts and styles and talks only to this origin: no inline script, no eval.
const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export interface ConsoleFile {
  body: Buffer;
  headers: Record<string, string>;
}

export interface ConsoleAnswer extends ConsoleFile {
  status: number;
}

// Every page the service serves to a browser (the console, the API docs) carries these beside its CSP.
export const PAGE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const COMMON_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  ...PAGE_SECURITY_HEADERS,
};

// The files are read once at start-up into memory (the console is a few tens of kilobytes). Only names in
// this map are ever answered, so a request path cannot reach anything else on the disk.
export class ConsoleFiles {
  private readonly files = new Map<string, ConsoleFile>();
  private readonly index: ConsoleFile | undefined;

  constructor(dir: string = CONSOLE_DIR) {
    for (const relative of listFiles(dir)) {
      const urlPath = `${CONSOLE_PREFIX}/${relative.split(path.sep).join('/')}`;
      const type = CONTENT_TYPES[path.extname(relative)] ?? 'application/octet-stream';
      // Vite names every file under assets/ by its content hash: a new build is a new name.
      const immutable = relative.startsWith(`assets${path.sep}`);
      this.files.set(urlPath, {
        body: readFileSync(path.join(dir, relative)),
        headers: {
          ...COMMON_HEADERS,
          'content-type': type,
          'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        },
      });
    }
    this.index = this.files.get(`${CONSOLE_PREFIX}/index.html`);
  }

  // A file by its URL path; any other path under /console is a page of the app, answered by index.html.
  answer(url: string): ConsoleAnswer {
    const pathname = url.split('?')[0];
    const file = this.files.get(pathname);
    if (file && pathname !== `${CONSOLE_PREFIX}/index.html`) return { status: 200, ...file };
    // A missing hashed asset must not come back as HTML with a 200 (the browser would cache it as a script).
    if (pathname.startsWith(`${CONSOLE_PREFIX}/assets/`) || !this.index) {
      return {
        status: 404,
        body: Buffer.from(this.index ? 'Not found\n' : 'The console is not built: run npm run build\n'),
        headers: { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' },
      };
    }
    return { status: 200, ...this.index };
  }
}

function listFiles(dir: string, prefix = ''): string[] {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, prefix));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const relative = path.join(prefix, name);
    return statSync(path.join(dir, relative)).isDirectory() ? listFiles(dir, relative) : [relative];
  });
}

export const isConsolePath = (url: string | undefined): boolean =>
  url !== undefined && (url === CONSOLE_PREFIX || url.startsWith(`${CONSOLE_PREFIX}/`) || url.startsWith(`${CONSOLE_PREFIX}?`));
