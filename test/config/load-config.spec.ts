import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { defaultMaxConnections } from '../../src/config/descriptor-limit.js';

const CWD = '/srv/toolgate';
const TOKEN = 'a-production-admin-token-0123456789';
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, CWD);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('with no variables runs in development on port 3000 with the embedded PGlite under <cwd>/.data/pglite', () => {
    const config = loadConfig({}, CWD);

    expect(config).toMatchObject({
      nodeEnv: 'development',
      host: '0.0.0.0',
      port: 3000,
      logLevel: 'info',
      database: { kind: 'pglite', dataDir: '/srv/toolgate/.data/pglite' },
      migrateOnStart: true,
      adminToken: null,
      workspace: { root: null, allowedRoots: [], fallback: 'cwd' },
    });
  });

  it('resolves WORKSPACE_ROOT against the working directory and allows only it by default', () => {
    const config = loadConfig({ WORKSPACE_ROOT: 'workspaces' }, CWD);

    expect(config.workspace).toMatchObject({ root: '/srv/toolgate/workspaces', allowedRoots: ['/srv/toolgate/workspaces'] });
  });

  it('reads WORKSPACE_ALLOWED_ROOTS as a comma-separated list of paths', () => {
    const config = loadConfig({ WORKSPACE_ROOT: '/data/ws', WORKSPACE_ALLOWED_ROOTS: '/data/ws, shared ,,/mnt/repos' }, CWD);

    expect(config.workspace.allowedRoots).toEqual(['/data/ws', '/srv/toolgate/shared', '/mnt/repos']);
  });

  it('refuses to fall back to the working directory in production unless WORKSPACE_FALLBACK says so', () => {
    expect(loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: TOKEN, SECRETS_KEY }, CWD).workspace.fallback).toBe('error');
    expect(loadConfig({ NODE_ENV: 'production', ADMIN_TOKEN: TOKEN, SECRETS_KEY, WORKSPACE_FALLBACK: 'cwd' }, CWD).workspace.fallback).toBe(
      'cwd',
    );
    expect(loadConfig({ WORKSPACE_FALLBACK: 'error' }, CWD).workspace.fallback).toBe('error');
  });

  it('trims values and reads booleans written as true/false, 1/0 or yes/no', () => {
    expect(loadConfig({ PORT: ' 8080 ' }, CWD).port).toBe(8080);
    for (const [raw, value] of [
      ['false', false],
      ['0', false],
      ['NO', false],
      ['true', true],
      ['1', true],
      ['yes', true],
    ] as const) {
      expect(loadConfig({ MIGRATE_ON_START: raw }, CWD).migrateOnStart).toBe(value);
    }
  });

  it('bounds heap growth to 100% by default; HEAP_GROWING_PERCENT changes it, 0 leaves it to V8', () => {
    expect(loadConfig({}, CWD).heapGrowingPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '50' }, CWD).heapGrowingPercent).toBe(50);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }, CWD).heapGrowingPercent).toBe(0);
    expect(configError({ HEAP_GROWING_PERCENT: '-5' }).problems).toEqual([
      "HEAP_GROWING_PERCENT must be an integer between 0 and 1000, got '-5'",
    ]);
  });

  describe('DATABASE_URL', () => {
    const PG_URL = 'postgresql://toolgate:pw@db.internal:5432/toolgate';
    const PG_URL_SHORT = 'postgres://db.internal/toolgate?sslmode=require';

    it.each([
      [PG_URL, 'that PostgreSQL server', { kind: 'postgres', url: PG_URL }],
      [PG_URL_SHORT, 'that PostgreSQL server', { kind: 'postgres', url: PG_URL_SHORT }],
      ['pglite://memory', 'an in-memory PGlite', { kind: 'pglite', dataDir: null }],
      ['pglite://var/pglite', 'PGlite in <cwd>/var/pglite', { kind: 'pglite', dataDir: '/srv/toolgate/var/pglite' }],
      ['pglite:///var/lib/toolgate', 'PGlite in /var/lib/toolgate', { kind: 'pglite', dataDir: '/var/lib/toolgate' }],
    ])('%s selects %s', (url, _what, target) => {
      expect(loadConfig({ DATABASE_URL: url }, CWD).database).toEqual(target);
    });

    it('PGLITE_DATA_DIR moves the embedded database when DATABASE_URL is unset', () => {
      expect(loadConfig({ PGLITE_DATA_DIR: 'db' }, CWD).database).toEqual({ kind: 'pglite', dataDir: '/srv/toolgate/db' });
    });

    it.each(['mysql://root@localhost/toolgate', 'postgresql://toolgate:pw@db:99999/toolgate', 'pglite://', 'localhost:5432'])(
      'rejects %s, naming DATABASE_URL and the forms it accepts',
      (url) => {
        expect(configError({ DATABASE_URL: url }).problems).toEqual([
          expect.stringMatching(/^DATABASE_URL must be a postgresql:\/\/.* URL, pglite:\/\/memory or pglite:\/\/<directory>/),
        ]);
      },
    );

    it('does not echo a rejected DATABASE_URL, which may hold a password', () => {
      expect(configError({ DATABASE_URL: 'postgresql://toolgate:s3cret@db:99999/toolgate' }).message).not.toContain('s3cret');
    });
  });

  it('names every bad variable in one ConfigError', () => {
    const error = configError({
      NODE_ENV: 'staging',
      PORT: 'notaport',
      LOG_LEVEL: 'loud',
      MIGRATE_ON_START: 'maybe',
      BODY_LIMIT_BYTES: '12',
      DATABASE_URL: 'mysql://localhost/toolgate',
      WORKSPACE_FALLBACK: 'home',
    });

    const named = ['NODE_ENV', 'PORT', 'LOG_LEVEL', 'MIGRATE_ON_START', 'BODY_LIMIT_BYTES', 'DATABASE_URL', 'WORKSPACE_FALLBACK'];
    expect(error.problems).toHaveLength(named.length);
    for (const name of named) {
      expect(error.problems).toContainEqual(expect.stringMatching(new RegExp(`^${name} must be`)));
      expect(error.message).toContain(name);
    }
    expect(error.message).toMatch(/^Invalid configuration:\n {2}- /);
  });

  it.each(['notaport', '65536', '-1', '80.5', '1e3', '0x50'])('rejects PORT=%s, naming PORT and the value', (port) => {
    expect(configError({ PORT: port }).problems).toEqual([`PORT must be an integer between 0 and 65535, got '${port}'`]);
  });

  it('requires ADMIN_TOKEN in production, and a blank one counts as missing', () => {
    const envs: Array<Record<string, string>> = [
      { NODE_ENV: 'production', SECRETS_KEY },
      { NODE_ENV: 'production', ADMIN_TOKEN: '   ', SECRETS_KEY },
    ];
    for (const env of envs) {
      expect(configError(env).problems).toEqual(['ADMIN_TOKEN is required when NODE_ENV=production']);
    }
  });

  it('rejects an ADMIN_TOKEN shorter than 16 characters in any environment, without echoing it', () => {
    const error = configError({ ADMIN_TOKEN: 'hunter2' });

    expect(error.problems).toEqual(['ADMIN_TOKEN must be at least 16 characters']);
    expect(error.message).not.toContain('hunter2');
  });

  describe('SECRETS_KEY', () => {
    it('is required in production, and read as 32 bytes of base64 or hex, with earlier keys for rotation', () => {
      expect(configError({ NODE_ENV: 'production', ADMIN_TOKEN: TOKEN }).problems).toEqual([
        'SECRETS_KEY is required when NODE_ENV=production (32 random bytes in base64, e.g. from: openssl rand -base64 32)',
      ]);
      const hex = Buffer.alloc(32, 9).toString('hex');
      const config = loadConfig({ SECRETS_KEY, SECRETS_KEY_PREVIOUS: hex }, CWD);
      expect(config.secrets).toEqual({ key: Buffer.alloc(32, 7), previousKeys: [Buffer.alloc(32, 9)] });
      expect(loadConfig({}, CWD).secrets).toEqual({ key: null, previousKeys: [] });
    });

    it('refuses a key that is not 32 bytes, without echoing it', () => {
      const error = configError({ SECRETS_KEY: 'too-short-to-be-a-key' });
      expect(error.problems).toEqual(['SECRETS_KEY must be 32 bytes written in base64 or hex (e.g. from: openssl rand -base64 32)']);
      expect(error.message).not.toContain('too-short-to-be-a-key');
    });
  });

  describe('the command sandbox', () => {
    it('sandboxes with bubblewrap as uid and gid 65534 by default, with nothing set', () => {
      expect(loadConfig({}, '/srv').tools.sandbox).toEqual({
        mode: 'bwrap',
        bwrapPath: '/usr/bin/bwrap',
        uid: 65534,
        gid: 65534,
        uidRange: { first: 200000, last: 265535 },
        tmpSizeBytes: 64 * 1024 * 1024,
        cgroup: 'auto',
      });
      expect(loadConfig({ SANDBOX_UID: '2000' }, '/srv').tools.sandbox).toMatchObject({ uid: 2000, gid: 2000 });
    });

    it('gives each tenant a uid from SANDBOX_UID_RANGE, or none with off, and refuses a range that is malformed or holds SANDBOX_UID', () => {
      expect(loadConfig({ SANDBOX_UID_RANGE: '300000-300099' }, '/srv').tools.sandbox.uidRange).toEqual({ first: 300000, last: 300099 });
      expect(loadConfig({ SANDBOX_UID_RANGE: 'off' }, '/srv').tools.sandbox.uidRange).toBeNull();
      expect(configError({ SANDBOX_UID_RANGE: '5-10' }).problems).toEqual([
        "SANDBOX_UID_RANGE must be 'off' or 'first-last' with 1000 <= first <= last < 2147483647, e.g. 200000-265535, got '5-10'",
      ]);
      expect(configError({ SANDBOX_UID_RANGE: '60000-70000' }).problems).toEqual([
        'SANDBOX_UID_RANGE (60000-70000) must not hold SANDBOX_UID (65534)',
      ]);
    });

    it('refuses COMMAND_SANDBOX=none in production, and a sandbox uid of 0', () => {
      const production = { NODE_ENV: 'production', ADMIN_TOKEN: 'a-long-enough-admin-token', SECRETS_KEY };
      expect(configError({ ...production, COMMAND_SANDBOX: 'none' }).problems).toEqual([
        'COMMAND_SANDBOX=none (commands unsandboxed) is refused when NODE_ENV=production; install bubblewrap instead',
      ]);
      expect(loadConfig({ COMMAND_SANDBOX: 'none' }, '/srv').tools.sandbox.mode).toBe('none');
      expect(configError({ SANDBOX_UID: '0' }).problems).toEqual(["SANDBOX_UID must be an integer between 1 and 65534, got '0'"]);
    });

    it('limits each command to 512 MiB of memory, 120 CPU seconds and 256 MiB written, and each workspace to 1 GiB, by default', () => {
      const config = loadConfig({}, '/srv');
      expect(config.tools.shell).toMatchObject({ maxMemoryBytes: 512 * 1024 ** 2, maxCpuSeconds: 120, maxWriteBytes: 256 * 1024 ** 2 });
      expect(config.workspace.quotaBytes).toBe(1024 ** 3);
      const set = loadConfig(
        {
          SHELL_MAX_MEMORY_BYTES: '67108864',
          SHELL_MAX_CPU_SECONDS: '10',
          SHELL_MAX_WRITE_BYTES: '4194304',
          WORKSPACE_QUOTA_BYTES: '134217728',
          SANDBOX_CGROUP: 'off',
        },
        '/srv',
      );
      expect(set.tools.shell).toMatchObject({ maxMemoryBytes: 64 * 1024 ** 2, maxCpuSeconds: 10, maxWriteBytes: 4 * 1024 ** 2 });
      expect(set.workspace.quotaBytes).toBe(128 * 1024 ** 2);
      expect(set.tools.sandbox.cgroup).toBe('off');
    });

    it('refuses resource limits that are not whole numbers in range, naming each', () => {
      const error = configError({
        SHELL_MAX_MEMORY_BYTES: '1048576',
        SHELL_MAX_CPU_SECONDS: '0',
        SHELL_MAX_WRITE_BYTES: '4M',
        WORKSPACE_QUOTA_BYTES: '-1',
        SANDBOX_CGROUP: 'v1',
      });
      expect([...error.problems].sort()).toEqual([
        "SANDBOX_CGROUP must be one of auto, off, got 'v1'",
        "SHELL_MAX_CPU_SECONDS must be an integer between 1 and 86400, got '0'",
        "SHELL_MAX_MEMORY_BYTES must be an integer between 16777216 and 1099511627776, got '1048576'",
        "SHELL_MAX_WRITE_BYTES must be an integer between 1048576 and 1099511627776, got '4M'",
        "WORKSPACE_QUOTA_BYTES must be an integer between 1048576 and 1125899906842624, got '-1'",
      ]);
    });

    it('names the variables that replaced SHELL_RUN_AS', () => {
      expect(configError({ SHELL_RUN_AS: '65534:65534' }).problems).toEqual([
        'SHELL_RUN_AS was replaced by SANDBOX_UID and SANDBOX_GID (commands always run as an unprivileged uid under a root service)',
      ]);
    });
  });
});

describe('loadConfig: metrics, traces and log format', () => {
  it('serves no metrics, starts no tracing and picks the log format from the terminal by default', () => {
    const config = loadConfig({}, CWD);
    expect(config.metrics).toEqual({ token: null, port: null, host: null, tenants: 100 });
    expect(config.tracing).toEqual({ exporter: 'none' });
    expect(config.logFormat).toBe('auto');
  });

  it('reads METRICS_TOKEN, METRICS_PORT and METRICS_HOST', () => {
    const config = loadConfig({ METRICS_TOKEN: 'a-metrics-token-0123456789', METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' }, CWD);
    expect(config.metrics).toEqual({ token: 'a-metrics-token-0123456789', port: 9464, host: '127.0.0.1', tenants: 100 });
  });

  it('refuses a short METRICS_TOKEN, a METRICS_PORT that is not a port and an unknown LOG_FORMAT, naming each', () => {
    const error = configError({ METRICS_TOKEN: 'short', METRICS_PORT: '70000', LOG_FORMAT: 'fancy' });
    expect([...error.problems].sort()).toEqual([
      "LOG_FORMAT must be one of auto, json, pretty, got 'fancy'",
      "METRICS_PORT must be an integer between 0 and 65535, got '70000'",
      'METRICS_TOKEN must be at least 16 characters',
    ]);
  });

  it('switches tracing on only when OTEL_* asks for an exporter, and OTEL_SDK_DISABLED wins', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, CWD).tracing).toEqual({ exporter: 'otlp' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, CWD).tracing).toEqual({
      exporter: 'otlp',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }, CWD).tracing).toEqual({ exporter: 'console' });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, CWD).tracing).toEqual({
      exporter: 'none',
    });
    expect(loadConfig({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, CWD).tracing).toEqual({ exporter: 'none' });
    expect(configError({ OTEL_TRACES_EXPORTER: 'zipkin' }).problems).toEqual([
      "OTEL_TRACES_EXPORTER must be one of otlp, console, none, got 'zipkin'",
    ]);
  });

  it('reads the transport settings: request timeouts, the MCP endpoint’s names and origins, stream caps', () => {
    expect(loadConfig({}, CWD).transport).toEqual({
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 60_000,
      maxConnections: defaultMaxConnections(),
      maxConnectionsPerAddress: 512,
      allowedHosts: null,
      mcpAllowedOrigins: [],
      mcpProgressIntervalMs: 5_000,
      maxStreamsPerTenant: 20,
      maxStreamsPerKey: 20,
      minReadBytesPerSecond: 16 * 1024,
      readWindowMs: 10_000,
    });
    const config = loadConfig(
      {
        HTTP_HEADERS_TIMEOUT_MS: '5000',
        HTTP_REQUEST_TIMEOUT_MS: '30000',
        ALLOWED_HOSTS: 'Toolgate.example.com, *.corp.example,10.0.0.5,[::1]',
        MCP_ALLOWED_ORIGINS: 'https://App.example.com,http://localhost:5173/',
        SSE_MAX_STREAMS_PER_TENANT: '100',
        SSE_MAX_STREAMS_PER_KEY: '5',
        MCP_PROGRESS_INTERVAL_MS: '1000',
        HTTP_MAX_CONNECTIONS: '2000',
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
      },
      CWD,
    );
    expect(config.transport).toEqual({
      headersTimeoutMs: 5000,
      requestTimeoutMs: 30_000,
      maxConnections: 2000,
      maxConnectionsPerAddress: 0,
      allowedHosts: ['toolgate.example.com', '*.corp.example', '10.0.0.5', '[::1]'],
      mcpAllowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
      mcpProgressIntervalMs: 1000,
      maxStreamsPerTenant: 100,
      maxStreamsPerKey: 5,
      minReadBytesPerSecond: 16 * 1024,
      readWindowMs: 10_000,
    });
  });

  it('refuses a header timeout past the request timeout, a host with a port, an origin with a path and a zero stream cap, naming each', () => {
    const error = configError({
      HTTP_HEADERS_TIMEOUT_MS: '90000',
      ALLOWED_HOSTS: 'api.example.com:8443',
      MCP_ALLOWED_ORIGINS: 'https://app.example.com/console',
      SSE_MAX_STREAMS_PER_KEY: '0',
    });
    expect([...error.problems].sort()).toEqual([
      "ALLOWED_HOSTS entries are host names without a port ('api.example.com', '*.example.com', '10.0.0.5', '[::1]' or '*'), got 'api.example.com:8443'",
      'HTTP_HEADERS_TIMEOUT_MS must not be larger than HTTP_REQUEST_TIMEOUT_MS',
      "MCP_ALLOWED_ORIGINS entries are origins such as https://app.example.com or http://localhost:5173, got 'https://app.example.com/console'",
      "SSE_MAX_STREAMS_PER_KEY must be an integer between 1 and 100000, got '0'",
    ]);
  });
});

describe('OAUTH_APP_SCHEMES', () => {
  it("lists the native MCP clients' own redirect schemes, and refuses one that runs script, reaches the network or hands off to the system", () => {
    expect(loadConfig({}, CWD).oauth.appSchemes).toEqual(['cursor', 'vscode', 'vscode-insiders', 'windsurf']);
    expect(loadConfig({ OAUTH_APP_SCHEMES: 'Zed:, myclient' }, CWD).oauth.appSchemes).toEqual(['zed', 'myclient']);
    const error = configError({ OAUTH_APP_SCHEMES: 'cursor,javascript,ms-msdt,http,not a scheme,x-apple.systempreferences' });
    expect([...error.problems].sort()).toEqual(
      ['http', 'javascript', 'ms-msdt', 'not a scheme', 'x-apple.systempreferences'].map(
        (s) => `OAUTH_APP_SCHEMES lists scheme names of native MCP clients (e.g. cursor,vscode); '${s}' cannot be one`,
      ),
    );
  });
});

describe('OAUTH_TENANT_CLAIM_MATCHES', () => {
  it("matches an external token's tenant claim against the tenant's id by default, or its name, and nothing else", () => {
    expect(loadConfig({}, CWD).oauth.tenantClaimMatches).toBe('id');
    expect(loadConfig({ OAUTH_TENANT_CLAIM_MATCHES: 'name' }, CWD).oauth.tenantClaimMatches).toBe('name');
    expect(configError({ OAUTH_TENANT_CLAIM_MATCHES: 'either' }).problems).toEqual([
      "OAUTH_TENANT_CLAIM_MATCHES must be one of id, name, got 'either'",
    ]);
  });
});

describe('the compiled service (dist/main.js) with a bad configuration', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const main = path.join(root, 'dist/main.js');
  let cwd: string;

  beforeAll(() => {
    if (!existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` before these tests');
  });
  beforeEach(async () => {
    cwd = await mkdtemp(path.join(os.tmpdir(), 'toolgate-config-'));
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  // A service that wrongly accepted the configuration would start listening; the timeout ends it.
  const start = (env: Record<string, string>) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [main],
        { cwd, timeout: 15_000, env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'pglite://memory', ...env } },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, signal: child.signalCode, stderr }),
      );
    });

  it('exits non-zero, naming PORT on stderr, when PORT is not a port', async () => {
    const result = await start({ PORT: 'notaport' });

    expect(result.signal).toBeNull();
    expect(result.code).toBeGreaterThan(0);
    expect(result.stderr).toContain("PORT must be an integer between 0 and 65535, got 'notaport'");
  });

  it('exits non-zero, naming ADMIN_TOKEN on stderr, in production without ADMIN_TOKEN', async () => {
    const result = await start({ NODE_ENV: 'production' });

    expect(result.signal).toBeNull();
    expect(result.code).toBeGreaterThan(0);
    expect(result.stderr).toContain('ADMIN_TOKEN is required when NODE_ENV=production');
  });
});
