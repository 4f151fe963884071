import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, spawnLogged, waitUntilReady, watchMemory } from './processes.mjs';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

// The service is measured as it is deployed: with the Node flags `npm start` (and the Dockerfile) give it,
// e.g. the young generation's size, which only a flag at start-up can set.
export function startFlags(root = REPO_ROOT) {
  const start = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  const main = start.indexOf('dist/main.js');
  if (start[0] !== 'node' || main === -1)
    throw new Error(`package.json's start script is not "node [flags] dist/main.js": ${start.join(' ')}`);
  return start.slice(1, main);
}

export function assertBuilt(root = REPO_ROOT) {
  const main = path.join(root, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${path.relative(process.cwd(), main)} is missing: run npm run build first`);
}

// The environment is built from scratch so nothing in the caller's shell (DATABASE_URL, NODE_OPTIONS,
// LOG_LEVEL...) changes what is measured.
function baseEnv() {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const name of ['HOME', 'TMPDIR', 'LANG']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

// `env` adds to or overrides the service's settings; BENCH_ENV_<NAME> in the caller's environment overrides both.
// `node`: the node binary the service runs on (the bench's own by default); `root`: the checkout whose build
// runs (this one by default).
export async function startToolgate({
  label,
  adapter,
  databaseUrl,
  adminToken,
  workspaceRoot,
  logFile,
  nodeArgs = [],
  env: extraEnv = {},
  node = process.execPath,
  root = REPO_ROOT,
}) {
  const port = await freePort();
  const env = {
    ...baseEnv(),
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: adminToken,
    WORKSPACE_ROOT: workspaceRoot,
    LOG_LEVEL: 'warn',
    HTTP_ADAPTER: adapter,
    // The per-tenant limit (1200 requests a minute by default) would otherwise be all a load test measures;
    // the limiter itself still runs on every request.
    RATE_LIMIT_REQUESTS: '10000000',
    // Likewise the calls one tenant may have in progress (32 by default): the bench's one tenant runs 50 at once.
    TENANT_CONCURRENT_CALLS: '100000',
    ...extraEnv,
  };
  // BENCH_ENV_<NAME>=value sets <NAME> for the service, to compare settings (e.g. BENCH_ENV_HEAP_GROWING_PERCENT=0).
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('BENCH_ENV_') && value !== undefined) env[name.slice('BENCH_ENV_'.length)] = value;
  }
  const proc = spawnLogged(label, node, [...startFlags(root), ...nodeArgs, path.join(root, 'dist', 'main.js')], {
    env,
    cwd: root,
    logFile,
  });
  const memory = watchMemory(proc.pid);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilReady(proc, async () => (await fetch(`${baseUrl}/health/ready`)).ok, { label });
  return {
    label,
    adapter,
    baseUrl,
    pid: proc.pid,
    proc,
    memory,
    async stop() {
      const snapshot = memory.snapshot();
      const outcome = await proc.stop();
      memory.stop();
      return { ...snapshot, ...outcome };
    },
  };
}

export async function api(baseUrl, method, route, { token, body, expect = [200, 201] } = {}) {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!expect.includes(response.status)) {
    throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return { status: response.status, json, bytes: Buffer.byteLength(text) };
}

// A tenant, its key and one project, through the public API as a client would do it.
export async function provisionTenant(service, adminToken, name) {
  const tenant = (await api(service.baseUrl, 'POST', '/v1/admin/tenants', { token: adminToken, body: { name } })).json;
  const key = (
    await api(service.baseUrl, 'POST', `/v1/admin/tenants/${tenant.id}/api-keys`, { token: adminToken, body: { name: 'bench' } })
  ).json.key;
  const project = await createProject(service, key, 'bench');
  return { tenantId: tenant.id, key, projectId: project.id };
}

export async function createProject(service, key, slug) {
  return (await api(service.baseUrl, 'POST', '/v1/projects', { token: key, body: { name: `Bench ${slug}`, slug } })).json;
}

// `count` command tools spread over skills of at most 128 tools, all enabled on one project.
export async function enableSkillTools(service, key, projectId, count, prefix) {
  let made = 0;
  for (let s = 0; made < count; s++) {
    const size = Math.min(128, count - made);
    const tools = Array.from({ length: size }, (_, i) => ({
      name: `${prefix}_${s}_${i}`,
      description: `Echoes x (bench tool ${made + i + 1} of ${count})`,
      inputSchema: {
        type: 'object',
        properties: { x: { type: 'string', maxLength: 256, description: 'What to echo' } },
        required: ['x'],
        additionalProperties: false,
      },
      executor: { type: 'command', argv: ['echo', '{{x}}'] },
    }));
    const skill = (
      await api(service.baseUrl, 'POST', '/v1/skills', {
        token: key,
        body: { name: `${prefix}_${s}`, version: '1.0.0', description: `Bench skill ${s}`, tools },
      })
    ).json;
    await api(service.baseUrl, 'POST', `/v1/projects/${projectId}/skills`, { token: key, body: { skillId: skill.id } });
    made += size;
  }
  return made;
}
