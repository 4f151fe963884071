import path from 'node:path';
import { defaultPerKeyThreads, defaultThreadCount } from './pool-size.js';
import type { AppConfig, CommandSandboxConfig, DatabaseTarget, WorkspaceFallback } from './app-config.js';
import { EnvReader } from './env-reader.js';
import { isRefusedAppScheme } from './redirect-schemes.js';
import { defaultMaxConnections } from './descriptor-limit.js';

// A bad variable stops start-up with a message naming every bad variable, not just the first.
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): AppConfig {
  const problems: string[] = [];
  const read = new EnvReader(env, problems);

  const nodeEnv = read.oneOf('NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const production = nodeEnv === 'production';
  const workspaceRoot = read.absolutePath('WORKSPACE_ROOT', cwd);
  const allowedRoots = read.pathList('WORKSPACE_ALLOWED_ROOTS', cwd) ?? (workspaceRoot ? [workspaceRoot] : []);
  const adminToken = read.string('ADMIN_TOKEN');
  if (adminToken !== null && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');
  if (production && adminToken === null) problems.push('ADMIN_TOKEN is required when NODE_ENV=production');

  const config: AppConfig = {
    nodeEnv,
    host: read.string('HOST') ?? '0.0.0.0',
    httpAdapter: read.oneOf('HTTP_ADAPTER', ['express', 'fastify'] as const, 'express'),
    port: read.integer('PORT', 3000, 0, 65535),
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: read.oneOf('LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    shutdownGraceMs: read.integer('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    heapGrowingPercent: read.integer('HEAP_GROWING_PERCENT', 100, 0, 1000),
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    database: parseDatabase(read, cwd, problems),
    migrateOnStart: read.boolean('MIGRATE_ON_START', true),
    adminToken,
    apiKeyCacheTtlMs: read.integer('API_KEY_CACHE_TTL_MS', 10_000, 0, 3_600_000),
    workspace: {
      root: workspaceRoot,
      allowedRoots,
      fallback: read.oneOf<WorkspaceFallback>('WORKSPACE_FALLBACK', ['cwd', 'error'], production ? 'error' : 'cwd'),
      cacheTtlMs: read.integer('WORKSPACE_CACHE_TTL_MS', 300_000, 0, 86_400_000),
      cacheMaxEntries: read.integer('WORKSPACE_CACHE_MAX_ENTRIES', 10_000, 1, 10_000_000),
      fileMaxBytes: read.integer('WORKSPACE_FILE_MAX_BYTES', 256 * 1024, 1, 64 * 1024 * 1024),
      readThreads: read.integer('WORKSPACE_READ_THREADS', 1, 0, 16),
      quotaBytes: read.integer('WORKSPACE_QUOTA_BYTES', 1024 ** 3, 1024 * 1024, 2 ** 50),
      quotaInodes: read.integer('WORKSPACE_QUOTA_INODES', 100_000, 100, 2 ** 31),
    },
    workerPool: parseWorkerPool(read, problems),
    tools: {
      readMaxBytes: read.integer('READ_FILE_MAX_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
      resultMaxBytes: read.integer('RESULT_MAX_BYTES', 32 * 1024 * 1024, 1024, 256 * 1024 * 1024),
      mcpResultMaxContentItems: read.integer('MCP_RESULT_MAX_CONTENT_ITEMS', 1000, 1, 100_000),
      mcpSourceRefreshMs: read.integer('MCP_SOURCE_REFRESH_S', 300, 0, 7 * 86_400) * 1000,
      shell: {
        maxOutputBytes: read.integer('SHELL_MAX_OUTPUT_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
        maxProcesses: read.integer('SHELL_MAX_PROCESSES', 64, 1, 4096),
        maxFileSizeBytes: read.integer('SHELL_MAX_FILE_SIZE_BYTES', 64 * 1024 * 1024, 1024, 2 ** 40),
        maxMemoryBytes: read.integer('SHELL_MAX_MEMORY_BYTES', 512 * 1024 * 1024, 16 * 1024 * 1024, 2 ** 40),
        maxCpuSeconds: read.integer('SHELL_MAX_CPU_SECONDS', 120, 1, 86_400),
        maxWriteBytes: read.integer('SHELL_MAX_WRITE_BYTES', 256 * 1024 * 1024, 1024 * 1024, 2 ** 40),
      },
      sandbox: parseSandbox(read, production, problems),
      fetch: {
        allowHosts: read.list('FETCH_ALLOW_HOSTS') ?? [],
        maxBytesLimit: read.integer('FETCH_MAX_BYTES_LIMIT', 10 * 1024 * 1024, 1024, 256 * 1024 * 1024),
      },
    },
    budgets: {
      maxProjects: read.integer('TENANT_MAX_PROJECTS', 100, 1, 1_000_000),
      maxSkills: read.integer('TENANT_MAX_SKILLS', 200, 1, 1_000_000),
      maxToolsets: read.integer('TENANT_MAX_TOOLSETS', 200, 1, 1_000_000),
      concurrentCommands: read.integer('TENANT_CONCURRENT_COMMANDS', 4, 1, 10_000),
      commandMemoryBytes: read.integer('TENANT_COMMAND_MEMORY_BYTES', 2 * 1024 ** 3, 16 * 1024 * 1024, 2 ** 50),
      storedAnswerBytes: read.integer('TENANT_STORED_ANSWER_BYTES', 256 * 1024 ** 2, 1024 * 1024, 2 ** 50),
      concurrentCalls: read.integer('TENANT_CONCURRENT_CALLS', 32, 1, 100_000),
      unreadAnswerBytes: read.integer('TENANT_UNREAD_ANSWER_BYTES', 256 * 1024 ** 2, 1024 * 1024, 2 ** 50),
      auditBytesPerDay: read.integer('TENANT_AUDIT_BYTES_PER_DAY', 256 * 1024 ** 2, 1024 * 1024, 2 ** 50),
      storageBytes: read.integer('TENANT_STORAGE_BYTES', 10 * 1024 ** 3, 1024 * 1024, 2 ** 50),
      storageInodes: read.integer('TENANT_STORAGE_INODES', 1_000_000, 100, 2 ** 31),
    },
    rateLimit: {
      requests: read.integer('RATE_LIMIT_REQUESTS', 1200, 1, 10_000_000),
      commandCalls: read.integer('RATE_LIMIT_COMMAND_CALLS', 120, 1, 10_000_000),
      signIn: read.integer('RATE_LIMIT_SIGN_IN', 30, 1, 10_000_000),
      authFailures: read.integer('RATE_LIMIT_AUTH_FAILURES', 100, 0, 10_000_000),
      windowMs: read.integer('RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
      redisUrl: read.string('REDIS_URL'),
      onStoreError: read.oneOf('RATE_LIMIT_ON_STORE_ERROR', ['deny', 'allow'] as const, 'deny'),
      storeTimeoutMs: read.integer('RATE_LIMIT_STORE_TIMEOUT_MS', 500, 50, 10_000),
    },
    changeBus: {
      mode: read.oneOf('CHANGE_BUS', ['auto', 'postgres', 'in-process'] as const, 'auto'),
      channel: read.string('CHANGE_BUS_CHANNEL') ?? 'toolgate_changes',
    },
    secrets: parseSecrets(read, production, problems),
    audit: {
      argumentsMaxBytes: read.integer('AUDIT_ARGUMENTS_MAX_BYTES', 8 * 1024, 256, 1024 * 1024),
      maxQueue: read.integer('AUDIT_MAX_QUEUE', 10_000, 1, 1_000_000),
      batchSize: read.integer('AUDIT_BATCH_SIZE', 500, 1, 10_000),
      flushIntervalMs: read.integer('AUDIT_FLUSH_INTERVAL_MS', 5, 0, 600_000),
      retentionMs: read.days('AUDIT_RETENTION_DAYS', 30, 36_500),
      exportsPerTenant: read.integer('AUDIT_EXPORTS_PER_TENANT', 2, 1, 1000),
    },
    metrics: parseMetrics(read, problems),
    tracing: parseTracing(read),
    oauth: parseOAuth(read, production, problems),
    transport: parseTransport(read, problems),
    calls: {
      batchConcurrency: read.integer('BATCH_CONCURRENCY', 8, 1, 32),
      responseMaxBytes: read.integer('RESPONSE_MAX_BYTES', 64 * 1024 * 1024, 64 * 1024, 1024 ** 3),
      idempotencyTtlMs: read.integer('IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 365) * 3_600_000,
      idempotencyWaitMs: read.integer('IDEMPOTENCY_WAIT_MS', 10_000, 0, 600_000),
      approvalTimeoutMs: read.integer('APPROVAL_TIMEOUT_MS', 15 * 60_000, 100, 7 * 86_400_000),
      approvalDelivery: {
        routesPerProject: read.integer('APPROVAL_ROUTES_PER_PROJECT', 10, 1, 100),
        timeoutMs: read.integer('APPROVAL_DELIVERY_TIMEOUT_MS', 10_000, 100, 60_000),
        attempts: read.integer('APPROVAL_DELIVERY_ATTEMPTS', 5, 1, 20),
        retryBaseMs: read.integer('APPROVAL_DELIVERY_RETRY_MS', 5_000, 10, 3_600_000),
        retentionMs: read.days('APPROVAL_DELIVERY_RETENTION_DAYS', 7, 3650),
        keptPerRoute: read.integer('APPROVAL_DELIVERIES_PER_ROUTE', 1000, 10, 1_000_000),
      },
    },
  };
  // Interpolated into LISTEN as a quoted identifier.
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.changeBus.channel)) {
    problems.push('CHANGE_BUS_CHANNEL must be a lower-case identifier (letters, digits, _; at most 63)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function parseWorkerPool(read: EnvReader, problems: string[]): AppConfig['workerPool'] {
  const threads = read.integer('WORKER_POOL_THREADS', defaultThreadCount(), 1, 256);
  const tenantThreads = read.integer('WORKER_POOL_TENANT_THREADS', defaultPerKeyThreads(threads), 1, 256);
  if (tenantThreads > threads)
    problems.push(`WORKER_POOL_TENANT_THREADS (${tenantThreads}) must not be more than WORKER_POOL_THREADS (${threads})`);
  const tenantCpuGroups = read.oneOf('TENANT_CPU_GROUPS', ['auto', 'off'] as const, 'auto');
  return { threads, tenantThreads: Math.min(tenantThreads, threads), tenantCpuGroups };
}

function parseSandbox(read: EnvReader, production: boolean, problems: string[]): CommandSandboxConfig {
  const mode = read.oneOf('COMMAND_SANDBOX', ['bwrap', 'none'] as const, 'bwrap');
  if (mode === 'none' && production) {
    problems.push('COMMAND_SANDBOX=none (commands unsandboxed) is refused when NODE_ENV=production; install bubblewrap instead');
  }
  if (read.string('SHELL_RUN_AS') !== null) {
    problems.push(
      'SHELL_RUN_AS was replaced by SANDBOX_UID and SANDBOX_GID (commands always run as an unprivileged uid under a root service)',
    );
  }
  const bwrapPath = read.absolutePath('SANDBOX_BWRAP_PATH', '/') ?? '/usr/bin/bwrap';
  // 0 would hand the sandbox root's files; the kernel's overflow ids above 65534 are not real users.
  const uid = read.integer('SANDBOX_UID', 65534, 1, 65534);
  const gid = read.integer('SANDBOX_GID', uid === 65534 ? 65534 : uid, 1, 65534);
  const uidRange = parseUidRange(read.string('SANDBOX_UID_RANGE') ?? '200000-265535', uid, problems);
  const tmpSizeBytes = read.integer('SANDBOX_TMP_SIZE_BYTES', 64 * 1024 * 1024, 1024 * 1024, 16 * 1024 ** 3);
  const cgroup = read.oneOf('SANDBOX_CGROUP', ['auto', 'off'] as const, 'auto');
  return { mode, bwrapPath, uid, gid, uidRange, tmpSizeBytes, cgroup };
}

// `first-last`, above the ids of system and regular users (1000) and below 2^31 (tools that store uids
// as signed numbers), not holding SANDBOX_UID; `off` keeps every tenant on SANDBOX_UID.
function parseUidRange(raw: string, sharedUid: number, problems: string[]): CommandSandboxConfig['uidRange'] {
  if (raw === 'off') return null;
  const match = /^(\d+)-(\d+)$/.exec(raw);
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!(first >= 1000 && first <= last && last <= 2 ** 31 - 2)) {
    problems.push(
      `SANDBOX_UID_RANGE must be 'off' or 'first-last' with 1000 <= first <= last < 2147483647, e.g. 200000-265535, got '${raw}'`,
    );
    return null;
  }
  if (sharedUid >= first && sharedUid <= last) problems.push(`SANDBOX_UID_RANGE (${raw}) must not hold SANDBOX_UID (${sharedUid})`);
  return { first, last };
}

function parseOAuth(read: EnvReader, production: boolean, problems: string[]): AppConfig['oauth'] {
  const url = (name: string): string | null => {
    const value = read.string(name);
    if (value === null) return null;
    try {
      const parsed = new URL(value);
      if ((parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.search === '' && parsed.hash === '')
        return parsed.href.replace(/\/$/, '');
    } catch {
      // reported below
    }
    problems.push(`${name} must be an http(s) URL without a query or fragment, e.g. https://toolgate.example.com, got '${value}'`);
    return null;
  };
  // Opening loopback addresses or trusting a private CA for client documents is for tests and development.
  const testOnly = <T>(name: string, value: T): T => {
    if (production && read.string(name) !== null)
      problems.push(`${name} is for tests and development only; it is refused when NODE_ENV=production`);
    return value;
  };
  const issuer = read.string('OAUTH_ISSUER');
  return {
    publicUrl: url('PUBLIC_URL'),
    accessTokenTtlMs: read.integer('OAUTH_ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 86_400) * 1000,
    refreshTokenTtlMs: read.integer('OAUTH_REFRESH_TOKEN_TTL_DAYS', 30, 1, 365) * 86_400_000,
    clientMetadataAllowHosts: testOnly('OAUTH_CLIENT_METADATA_ALLOW_HOSTS', read.list('OAUTH_CLIENT_METADATA_ALLOW_HOSTS') ?? []),
    clientMetadataCaFile: testOnly('OAUTH_CLIENT_METADATA_CA_FILE', read.string('OAUTH_CLIENT_METADATA_CA_FILE')),
    clientMetadataTimeoutMs: read.integer('OAUTH_CLIENT_METADATA_TIMEOUT_MS', 5000, 100, 30_000),
    appSchemes: appSchemes(read, problems),
    maxUnusedClients: read.integer('OAUTH_MAX_UNUSED_CLIENTS', 5000, 100, 10_000_000),
    // Compared with a token's `iss` exactly as written.
    issuer: url('OAUTH_ISSUER') === null ? null : issuer,
    jwksUrl: url('OAUTH_JWKS_URL'),
    tenantClaim: read.string('OAUTH_TENANT_CLAIM') ?? 'toolgate_tenant',
    // The id by default: the service assigns it and it never changes; a name is the operator's choice.
    tenantClaimMatches: read.oneOf('OAUTH_TENANT_CLAIM_MATCHES', ['id', 'name'] as const, 'id'),
  };
}

function parseTransport(read: EnvReader, problems: string[]): AppConfig['transport'] {
  const headersTimeoutMs = read.integer('HTTP_HEADERS_TIMEOUT_MS', 20_000, 1000, 600_000);
  const requestTimeoutMs = read.integer('HTTP_REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000);
  // Node refuses a header deadline past the whole request's.
  if (headersTimeoutMs > requestTimeoutMs) problems.push('HTTP_HEADERS_TIMEOUT_MS must not be larger than HTTP_REQUEST_TIMEOUT_MS');
  const allowedHosts = read.list('ALLOWED_HOSTS')?.map((h) => h.toLowerCase()) ?? null;
  for (const host of allowedHosts ?? []) {
    if (host !== '*' && !/^(\*\.)?[a-z0-9._-]+$|^\[?[0-9a-f:.]+\]?$/.test(host)) {
      problems.push(
        `ALLOWED_HOSTS entries are host names without a port ('api.example.com', '*.example.com', '10.0.0.5', '[::1]' or '*'), got '${host}'`,
      );
    }
  }
  const mcpAllowedOrigins: string[] = [];
  for (const origin of read.list('MCP_ALLOWED_ORIGINS') ?? []) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (parsed === null || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      problems.push(`MCP_ALLOWED_ORIGINS entries are origins such as https://app.example.com or http://localhost:5173, got '${origin}'`);
    } else {
      mcpAllowedOrigins.push(parsed.origin);
    }
  }
  const minReadBytesPerSecond = read.integer('RESPONSE_MIN_READ_BYTES_PER_S', 16 * 1024, 1, 1024 ** 3);
  const readWindowMs = read.integer('RESPONSE_READ_WINDOW_S', 10, 1, 3600) * 1000;
  return {
    minReadBytesPerSecond,
    readWindowMs,
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections: read.integer('HTTP_MAX_CONNECTIONS', defaultMaxConnections(), 1, 10_000_000),
    maxConnectionsPerAddress: read.integer('HTTP_MAX_CONNECTIONS_PER_ADDRESS', 512, 0, 10_000_000),
    allowedHosts,
    mcpAllowedOrigins,
    mcpProgressIntervalMs: read.integer('MCP_PROGRESS_INTERVAL_MS', 5_000, 50, 60_000),
    maxStreamsPerTenant: read.integer('SSE_MAX_STREAMS_PER_TENANT', 20, 1, 100_000),
    maxStreamsPerKey: read.integer('SSE_MAX_STREAMS_PER_KEY', 20, 1, 100_000),
  };
}

function parseMetrics(read: EnvReader, problems: string[]): AppConfig['metrics'] {
  const token = read.string('METRICS_TOKEN');
  if (token !== null && token.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  const rawPort = read.string('METRICS_PORT');
  // 0 asks the system for a free port (tests); the address is logged.
  const port = rawPort === null ? null : read.integer('METRICS_PORT', 0, 0, 65535);
  return { token, port, host: read.string('METRICS_HOST'), tenants: read.integer('METRICS_TENANTS', 100, 0, 10_000) };
}

// Tracing is off unless the standard OTEL_* variables ask for an exporter: OTEL_TRACES_EXPORTER=otlp or
// console, or an OTLP endpoint. OTEL_SDK_DISABLED=true wins. The SDK reads the rest of OTEL_* itself.
function parseTracing(read: EnvReader): AppConfig['tracing'] {
  const disabled = read.boolean('OTEL_SDK_DISABLED', false);
  const endpoint = read.string('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? read.string('OTEL_EXPORTER_OTLP_ENDPOINT');
  const exporter = read.oneOf('OTEL_TRACES_EXPORTER', ['otlp', 'console', 'none'] as const, endpoint !== null ? 'otlp' : 'none');
  return { exporter: disabled ? 'none' : exporter };
}

function parseSecrets(read: EnvReader, production: boolean, problems: string[]): AppConfig['secrets'] {
  const key = read.string('SECRETS_KEY');
  if (key === null && production) {
    problems.push('SECRETS_KEY is required when NODE_ENV=production (32 random bytes in base64, e.g. from: openssl rand -base64 32)');
  }
  const parsed = key === null ? null : secretsKey('SECRETS_KEY', key, problems);
  const previousKeys = (read.list('SECRETS_KEY_PREVIOUS') ?? []).map((value) => secretsKey('SECRETS_KEY_PREVIOUS', value, problems));
  return { key: parsed, previousKeys: previousKeys.filter((k): k is Buffer => k !== null) };
}

// 32 bytes, written as base64 (44 characters) or hex (64); the value is never echoed.
function secretsKey(name: string, value: string, problems: string[]): Buffer | null {
  const bytes = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(value)
      ? Buffer.from(value, 'base64')
      : null;
  if (bytes?.length === 32) return bytes;
  problems.push(`${name} must be 32 bytes written in base64 or hex (e.g. from: openssl rand -base64 32)`);
  return null;
}

function parseDatabase(read: EnvReader, cwd: string, problems: string[]): DatabaseTarget {
  const url = read.string('DATABASE_URL');
  if (url === null) {
    const dataDir = read.absolutePath('PGLITE_DATA_DIR', cwd) ?? path.resolve(cwd, '.data/pglite');
    return { kind: 'pglite', dataDir };
  }
  if (url === 'pglite://memory') return { kind: 'pglite', dataDir: null };
  // An empty directory would put the database files in the working directory itself.
  const pgliteDir = url.startsWith('pglite://') ? url.slice('pglite://'.length) : null;
  if (pgliteDir) return { kind: 'pglite', dataDir: path.resolve(cwd, pgliteDir) };
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
      return { kind: 'postgres', url };
    } catch {
      // fall through to the problem below
    }
  }
  problems.push(
    'DATABASE_URL must be a postgresql://user@host:port/db URL, pglite://memory or pglite://<directory> (unset: embedded PGlite in .data/pglite)',
  );
  return { kind: 'pglite', dataDir: null };
}

// Redirect URI schemes of MCP clients that name theirs without a reverse domain (RFC 8252 prefers one).
const DEFAULT_APP_SCHEMES = ['cursor', 'vscode', 'vscode-insiders', 'windsurf'];
const APP_SCHEME = /^[a-z][a-z0-9+.-]*$/;

function appSchemes(read: EnvReader, problems: string[]): string[] {
  const listed = read.list('OAUTH_APP_SCHEMES')?.map((s) => s.toLowerCase().replace(/:$/, '')) ?? DEFAULT_APP_SCHEMES;
  for (const scheme of listed) {
    if (!APP_SCHEME.test(scheme) || isRefusedAppScheme(scheme)) {
      problems.push(`OAUTH_APP_SCHEMES lists scheme names of native MCP clients (e.g. cursor,vscode); '${scheme}' cannot be one`);
    }
  }
  return listed;
}
