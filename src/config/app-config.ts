// The one typed configuration object, read and validated once at start-up (see loadConfig).
export type DatabaseTarget =
  | { kind: 'postgres'; url: string }
  // dataDir null: in memory, gone when the process exits.
  | { kind: 'pglite'; dataDir: string | null };

export type WorkspaceFallback = 'cwd' | 'error';

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  httpAdapter: 'express' | 'fastify';
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  // auto: readable lines when stdout is a terminal, JSON lines otherwise; json or pretty force one.
  logFormat: 'auto' | 'json' | 'pretty';
  bodyLimitBytes: number;
  // How long running tool calls may go on after SIGTERM, SIGINT or SIGHUP before they are cancelled.
  shutdownGraceMs: number;
  // V8 lets the heap grow this much past what survived the last full GC before collecting again; 0 keeps
  // V8's own factor (up to 300%). See applyHeapGrowth.
  heapGrowingPercent: number;
  database: DatabaseTarget;
  migrateOnStart: boolean;
  adminToken: string | null;
  apiKeyCacheTtlMs: number;
  workspace: {
    root: string | null;
    allowedRoots: string[];
    fallback: WorkspaceFallback;
    cacheTtlMs: number;
    cacheMaxEntries: number;
    fileMaxBytes: number;
    // Threads that make confined reads with blocking calls; 0 reads on the event loop.
    readThreads: number;
    // Disk space (allocated blocks) a project's workspace may use, through file tools and commands alike.
    quotaBytes: number;
    // Files, directories and links a project's workspace may hold (WORKSPACE_QUOTA_INODES): empty files cost
    // no blocks, and the host's file system has a fixed number of inodes for everyone.
    quotaInodes: number;
  };
  workerPool: {
    // Threads of the shared worker pool (searches, big listings, quota measurements, sync skills).
    threads: number;
    // Most of them one tenant's tasks may hold at once; its other tasks wait in its own queue.
    tenantThreads: number;
    // auto: each tenant's commands and pool tasks share the CPU as one cgroup (TENANT_CPU_GROUPS, see
    // TenantCpuGroups); off: never touch the cpu cgroups.
    tenantCpuGroups: 'auto' | 'off';
  };
  tools: {
    readMaxBytes: number;
    // The JSON text of one tool result, at most (RESULT_MAX_BYTES): a larger one is answered and stored as
    // the error result_too_large, so every answer of a run can be sent and kept.
    resultMaxBytes: number;
    // Content items of one upstream MCP tool result, at most (MCP_RESULT_MAX_CONTENT_ITEMS): the rest are
    // dropped and a note says how many.
    mcpResultMaxContentItems: number;
    // How often each MCP source is read again and compared with its pinned definitions (MCP_SOURCE_REFRESH_S); 0: never.
    mcpSourceRefreshMs: number;
    shell: {
      maxOutputBytes: number;
      maxProcesses: number;
      maxFileSizeBytes: number;
      // Memory of one command's processes together (a cgroup's memory.max, or the watchdog and RLIMIT_AS).
      maxMemoryBytes: number;
      // CPU seconds per process (RLIMIT_CPU); a call never gets more than its timeout allows (see cpuSecondsFor).
      maxCpuSeconds: number;
      // Bytes one command may write to files in all (the kernel's write_bytes of its processes).
      maxWriteBytes: number;
    };
    sandbox: CommandSandboxConfig;
    fetch: {
      // host or host:port entries the address checks let through (e.g. an internal API).
      allowHosts: string[];
      maxBytesLimit: number;
    };
  };
  rateLimit: {
    // Requests per tenant per window, on every tenant route.
    requests: number;
    // Calls of shell_exec and command skills per tenant per window.
    commandCalls: number;
    // OAuth client registrations and authorization requests per client address per window.
    signIn: number;
    // Requests refused 401 per client address per window, on this instance; 0: not counted.
    authFailures: number;
    windowMs: number;
    // Shared counters across instances; in memory per instance when unset.
    redisUrl: string | null;
    // When the store cannot answer (within storeTimeoutMs): refuse with 503 (deny), or let the request pass.
    onStoreError: 'deny' | 'allow';
    storeTimeoutMs: number;
  };
  // How cache invalidations and tool events reach the other instances (see src/common/bus). auto: LISTEN/NOTIFY
  // on PostgreSQL, in-process on PGlite (one process).
  changeBus: {
    mode: 'auto' | 'postgres' | 'in-process';
    // The NOTIFY channel: deployments sharing one database with separate instance groups set their own.
    channel: string;
  };
  secrets: {
    // Seals skill signing secrets and upstream headers at rest (AES-256-GCM). Null outside production: a
    // built-in development key is used, with a warning.
    key: Buffer | null;
    // Earlier keys, still able to open what they sealed until the start-up pass re-seals it.
    previousKeys: Buffer[];
  };
  audit: {
    argumentsMaxBytes: number;
    maxQueue: number;
    batchSize: number;
    flushIntervalMs: number;
    // How long audit rows are kept (AUDIT_RETENTION_DAYS); 0 keeps them forever.
    retentionMs: number;
    // NDJSON exports one tenant may have in progress on one instance (AUDIT_EXPORTS_PER_TENANT).
    exportsPerTenant: number;
  };
  // GET /metrics (Prometheus text format): with a token on the service's port, or on a port of its own.
  // Neither set: /metrics answers 404.
  metrics: {
    // Bearer token a scraper sends; required on the service's port, and on METRICS_PORT when set.
    token: string | null;
    // A separate plain HTTP listener for /metrics only (not the Nest app); null: none.
    port: number | null;
    // Where that listener binds; null: HOST.
    host: string | null;
    // Most tenants whose usage is exported (METRICS_TENANTS): those most recently active; 0 exports none.
    tenants: number;
  };
  // OpenTelemetry traces: the SDK is loaded only when an exporter is asked for by the OTEL_* variables.
  tracing: {
    exporter: 'otlp' | 'console' | 'none';
  };
  // Transport hygiene: how long a client may take to send a request, which names the MCP endpoint answers
  // to and which browser origins may call it, how many event streams a tenant and a key may hold open.
  oauth: OAuthConfig;
  transport: {
    // The request line and headers must arrive within this (HTTP_HEADERS_TIMEOUT_MS), the whole request,
    // body included, within requestTimeoutMs (HTTP_REQUEST_TIMEOUT_MS); a slower client gets 408 and is closed.
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    // Open connections at most (HTTP_MAX_CONNECTIONS; default half the process's descriptor limit, at most
    // 100,000) and per client address (HTTP_MAX_CONNECTIONS_PER_ADDRESS; 0 none): past either a new one is
    // closed at once.
    maxConnections: number;
    maxConnectionsPerAddress: number;
    // A client with an answer waiting must read at least this many bytes a second (RESPONSE_MIN_READ_BYTES_PER_S),
    // averaged over RESPONSE_READ_WINDOW_S, or its connection is closed and the answer's memory freed.
    minReadBytesPerSecond: number;
    readWindowMs: number;
    // Host names (Host header) the MCP endpoint answers to (ALLOWED_HOSTS); '*' any; `*.example.com` a
    // domain's subdomains. Null: localhost, the loopback addresses, HOST and this machine's names and addresses.
    allowedHosts: string[] | null;
    // Browser origins (besides the service's own) allowed to call the MCP endpoint (MCP_ALLOWED_ORIGINS).
    mcpAllowedOrigins: string[];
    // A tools/call that asked for progress (_meta.progressToken) gets a progress notification this often
    // while it runs (MCP_PROGRESS_INTERVAL_MS), which also resets the client's request timeout.
    mcpProgressIntervalMs: number;
    // Event streams (SSE) one tenant, and one API key, may hold open on this instance.
    maxStreamsPerTenant: number;
    maxStreamsPerKey: number;
  };
  // Call control: batches, idempotency keys, approval of calls (see src/calls).
  // What each tenant may hold at most, unless the operator set other figures for it (PATCH
  // /v1/admin/tenants/{id}); see src/budgets.
  budgets: TenantBudgetFigures;
  calls: {
    // Calls of one batch running at once.
    batchConcurrency: number;
    // The most one answer may hold: a batch's results together (RESPONSE_MAX_BYTES); past it each further
    // result is dropped for result_too_large.
    responseMaxBytes: number;
    // How long an idempotency key's answer is kept (IDEMPOTENCY_TTL_HOURS).
    idempotencyTtlMs: number;
    // How long a repeat waits for the first request with its key before answering 409.
    idempotencyWaitMs: number;
    // A parked call not approved or denied within this expires and never runs.
    approvalTimeoutMs: number;
    // Approval routes (src/approval-routes): how each announcement of a parked call is delivered.
    approvalDelivery: {
      // At most this many routes per project (APPROVAL_ROUTES_PER_PROJECT).
      routesPerProject: number;
      // One request's bound, connection to last byte (APPROVAL_DELIVERY_TIMEOUT_MS).
      timeoutMs: number;
      // Sends per delivery before it is failed (APPROVAL_DELIVERY_ATTEMPTS).
      attempts: number;
      // The wait after the first failed send; each further one waits four times longer (APPROVAL_DELIVERY_RETRY_MS).
      retryBaseMs: number;
      // Delivered and failed rows are deleted after this (APPROVAL_DELIVERY_RETENTION_DAYS; 0: never by age).
      retentionMs: number;
      // Finished rows kept per route, newest first, whatever their age (APPROVAL_DELIVERIES_PER_ROUTE).
      keptPerRoute: number;
    };
  };
}

// How tenant commands (shell_exec, command skills) are confined; see src/sandbox.
export interface CommandSandboxConfig {
  // bwrap: each command in its own bubblewrap sandbox. none: unsandboxed (refused in production).
  mode: 'bwrap' | 'none';
  bwrapPath: string;
  // The unprivileged uid/gid commands run as when the service runs as root (ignored otherwise: an
  // unprivileged service runs them as itself).
  uid: number;
  gid: number;
  // Under a root service, each tenant's commands run as a uid (and gid) of its own from this range
  // (SANDBOX_UID_RANGE), so per-uid kernel limits are not shared between tenants; null: every tenant's run
  // as `uid` (SANDBOX_UID_RANGE=off).
  uidRange: { first: number; last: number } | null;
  // Size of the sandbox's private /tmp (a tmpfs).
  tmpSizeBytes: number;
  // auto: a memory cgroup per command (v2 where delegable, else v1) holds its memory; off: never touch cgroups.
  cgroup: 'auto' | 'off';
}

export const APP_CONFIG = Symbol('APP_CONFIG');

// MCP sign-in (src/oauth).
export interface OAuthConfig {
  // The service's public origin (PUBLIC_URL), e.g. https://toolgate.example.com; null: the origin each
  // request was sent to (its Host, one of ALLOWED_HOSTS).
  publicUrl: string | null;
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  // Client ID metadata documents are fetched under the fetch_url address policy, HTTPS only. For tests and
  // development only: hosts (host:port) opened anyway, and extra CA certificates (a PEM file) to trust.
  clientMetadataAllowHosts: string[];
  clientMetadataCaFile: string | null;
  clientMetadataTimeoutMs: number;
  // Native apps' own redirect URI schemes without a reverse domain name that clients may register (OAUTH_APP_SCHEMES).
  appSchemes: string[];
  // Registered clients that never began an authorization kept at most, the newest (OAUTH_MAX_UNUSED_CLIENTS).
  maxUnusedClients: number;
  // An external authorization server whose JWT access tokens are accepted instead (OAUTH_ISSUER).
  issuer: string | null;
  // Where its signing keys are; null: the jwks_uri of its metadata.
  jwksUrl: string | null;
  // The claim naming the tenant a token acts for, and what it holds: the tenant's id, or its name (OAUTH_TENANT_CLAIM_MATCHES).
  tenantClaim: string;
  tenantClaimMatches: 'id' | 'name';
}

export interface TenantBudgetFigures {
  // Projects a tenant may have.
  maxProjects: number;
  // Skills a tenant may have registered.
  maxSkills: number;
  // Toolsets of all its projects together (each at most TOOLSET_MAX_BYTES as stored).
  maxToolsets: number;
  // Commands (shell_exec, command skills) of the tenant running at once, on every instance together, and
  // the memory limits of those commands added up.
  concurrentCommands: number;
  commandMemoryBytes: number;
  // Bytes of answers kept for the tenant: idempotency keys' stored answers, parked calls' arguments while
  // they wait and their outcomes once decided.
  storedAnswerBytes: number;
  // Tool calls of the tenant in progress at once on one instance (what each holds there: memory for its
  // answer, connections, descriptors, the event loop's time).
  concurrentCalls: number;
  // Bytes of the tenant's answers one instance has written and its clients not yet read, held in its memory
  // until they are: past it the tenant's requests there are refused until its clients read.
  unreadAnswerBytes: number;
  // Bytes of text (arguments, error messages) the tenant's audit rows keep in full per UTC day, on one
  // instance; past it each text of a row is kept as a short preview (every call still has its row).
  auditBytesPerDay: number;
  // Disk space and inodes (files, directories, links) of all its projects' workspaces together.
  storageBytes: number;
  storageInodes: number;
}
