// postinstall: `prisma generate`, falling back to the stub schema engine when the CLI cannot download
// the real one (offline install). Generating the client never runs the engine; migrations use our migrator.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const windows = process.platform === 'win32';
const cli = path.join(root, 'node_modules', '.bin', windows ? 'prisma.cmd' : 'prisma');
const stubEngine = path.join(root, 'scripts', 'schema-engine-stub.sh');

// What the CLI prints when it cannot fetch the engine from binaries.prisma.sh (no network, DNS, proxy, TLS).
const DOWNLOAD_FAILURE = new RegExp(
  [
    'binaries\\.prisma\\.sh',
    'getaddrinfo',
    'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH',
    'fetch failed|socket hang up',
    'failed to download|download(ing)? (of )?.*(failed|error)',
    'self[- ]signed certificate|unable to get local issuer certificate',
  ].join('|'),
  'i',
);

function generate(env) {
  // The .bin entry is a JS file with a shebang on POSIX; run it with this Node rather than relying on PATH.
  const [command, args] = windows ? [`"${cli}"`, ['generate']] : [process.execPath, [cli, 'generate']];
  const result = spawnSync(command, [...args, ...process.argv.slice(2)], {
    cwd: root,
    env,
    encoding: 'utf8',
    shell: windows,
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `${result.error.message}\n` : ''}`;
  return { ok: result.status === 0 && !result.error, status: result.status, result, output };
}

function echo({ result }) {
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  if (result.error) process.stderr.write(`${result.error.message}\n`);
}

function fail(attempt) {
  echo(attempt);
  process.exit(attempt.status || 1);
}

if (!existsSync(cli)) {
  // A production install (`npm ci --omit=dev`) has no CLI; the client was generated and compiled at build time.
  console.log('prisma generate: skipped, the prisma CLI is not installed (dev dependencies omitted)');
  process.exit(0);
}

const first = generate(process.env);
if (first.ok) {
  echo(first);
  process.exit(0);
}
if (process.env.PRISMA_SCHEMA_ENGINE_BINARY || !DOWNLOAD_FAILURE.test(first.output)) fail(first);

console.log(
  'prisma generate: schema engine download failed (offline?); generated with the stub engine — migrations are applied by npm run db:migrate',
);
const retry = generate({ ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stubEngine });
if (!retry.ok) fail(retry);
echo(retry);
