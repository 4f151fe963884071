import type { AppConfig } from '../../config/app-config.js';
import type { WorkerPool } from '../../common/worker-pool/worker-pool.js';
import type { SkillWorkerTasks } from './skill-worker-tasks.js';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import type { WorkspaceQuota } from '../../workspace/workspace-quota.js';
import type { TenantStorage } from '../../workspace/tenant-storage.js';
import type { CommandAdmission } from '../../budgets/command-admission.js';
import { cpuSecondsFor } from '../../execution/process/process-limits.js';
import { shellDisabled } from '../../execution/process/executable-allowlist.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import type { UpstreamMcpClients } from '../mcp/upstream-mcp-clients.js';
import { capResultContent } from '../mcp/upstream-answer-caps.js';
import type { ModernUpstreams } from '../mcp/modern-upstream.js';
import { callToolInRound } from '../mcp/upstream-rounds.js';
import { InputRequired, type InputRequiredAnswer, sourceIdentity } from '../../execution/input-required.js';
import type { CompiledSkillTool } from '../skill-compiler.js';
import { SKILL_HTTP_MAX_BYTES } from '../skills.limits.js';
import { ToolError } from '../../execution/tool-error.js';
import { redactText, scrubWholeValues } from '../../common/secrets/secret-redaction.js';
import { executorSecrets } from '../skill-secrets.js';
import { runSkillTool, type SkillRunRequest } from './skill-runner.js';
import type { CommandExecutorSpec, HttpExecutorSpec, McpExecutorAuth, McpExecutorSpec } from './executor-specs.js';
import type { ConnectionTokens } from '../../connections/connection-tokens.js';
import { tokenHostRefused, userRequired } from '../../connections/connections.errors.js';
import { connectionUser, sourceToken, withBearer, withoutTokens, withSourceToken } from '../mcp/mcp-source-auth.js';

// A tenant's tool, run like a built-in one: `async` on the event loop, a `sync` command in the worker pool
// with cooperative cancellation (the pool thread kills its child process itself).
export class SkillToolExecutor implements ToolExecutor {
  readonly definition: ToolDefinition;
  readonly spawnsProcesses: boolean;
  readonly relaysMcpContent: boolean;
  readonly mcpUpstream?: { url: string; headers?: Record<string, string>; auth?: McpExecutorAuth };
  private readonly ownSecrets: string[];

  constructor(
    private readonly tool: CompiledSkillTool,
    private readonly signingSecret: string,
    private readonly config: AppConfig,
    private readonly pool: WorkerPool<SkillWorkerTasks>,
    private readonly sandbox: CommandSandbox,
    private readonly upstreams: UpstreamMcpClients,
    private readonly quota: WorkspaceQuota,
    private readonly storage: TenantStorage,
    private readonly admission: CommandAdmission,
    private readonly tokens: ConnectionTokens,
    private readonly modern: ModernUpstreams,
  ) {
    this.definition = tool.definition;
    this.spawnsProcesses = tool.spec.executor.type === 'command';
    this.relaysMcpContent = tool.spec.executor.type === 'mcp';
    if (tool.spec.executor.type === 'mcp') {
      const { url, headers, auth } = tool.spec.executor;
      this.mcpUpstream = { url, ...(headers && { headers }), ...(auth && { auth }) };
    }
    this.ownSecrets = tool.spec.executor.type === 'command' ? [] : executorSecrets(tool.spec.executor);
  }

  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const spec = this.tool.spec.executor;
    if (spec.type === 'command' && !ctx.project.shellEnabled) throw shellDisabled(this.definition.name);
    if (spec.type === 'command') return this.runCommand(spec, args, ctx);
    if (spec.type === 'http' && spec.auth) return this.callAsConnection(spec, spec.auth, args, ctx);
    if (spec.type === 'mcp' && spec.auth) return this.callUpstreamAsConnection(spec, spec.auth, args, ctx);
    const running = spec.type === 'mcp' ? this.callUpstream(spec, args, ctx) : this.run({ spec, args, ...this.common(ctx) }, ctx);
    return running.catch((error: unknown) => {
      throw this.withoutOwnSecrets(error);
    });
  }

  // An endpoint or MCP server that echoes what it received (its answer is the tool's error) would quote the
  // executor's own header values or URL credentials, which the call's arguments never held.
  private withoutOwnSecrets(error: unknown, tokens: readonly string[] = []): unknown {
    const secrets = tokens.length === 0 ? this.ownSecrets : [...this.ownSecrets, ...tokens];
    if (!(error instanceof ToolError) || secrets.length === 0) return error;
    const message = redactText(scrubWholeValues(error.message, secrets));
    return message === error.message ? error : new ToolError(error.code, message, error.retryable);
  }

  // An http tool that acts with a connection: the token of the call's end user (or the tenant's own), sent
  // only to a host in the provider's apiHosts (the executor follows no redirect); refreshed and tried once
  // more when the endpoint answers 401. The token never appears in an error: an endpoint may echo it.
  private async callAsConnection(
    spec: HttpExecutorSpec,
    auth: NonNullable<HttpExecutorSpec['auth']>,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<unknown> {
    const user = auth.as === 'tenant' ? null : (ctx.user ?? null);
    if (auth.as !== 'tenant' && user === null) throw userRequired(auth.provider);
    const sent: string[] = [];
    const attempt = async (stale?: string): Promise<unknown> => {
      const bearer = await this.tokens.bearerFor(ctx.tenantId, auth, user, stale);
      const host = new URL(spec.url).host.toLowerCase();
      if (!bearer.apiHosts.includes(host)) throw tokenHostRefused(host, auth.provider);
      sent.push(bearer.token);
      return this.run({ spec, args, ...this.common(ctx), bearer: bearer.token }, ctx);
    };
    try {
      try {
        return withoutTokens(await attempt(), sent);
      } catch (error) {
        if (!(error instanceof ToolError && error.code === 'endpoint_unauthorized')) throw error;
        return withoutTokens(await attempt(sent[0]), sent);
      }
    } catch (error) {
      throw this.withoutOwnSecrets(error, sent);
    }
  }

  private common(ctx: ToolContext) {
    return {
      signingSecret: this.signingSecret,
      invocationId: ctx.invocationId,
      workspace: ctx.workspace,
      shellAllowlist: ctx.project.shellAllowlist,
      timeoutMs: ctx.timeoutMs,
      fetch: { allowHosts: this.config.tools.fetch.allowHosts, maxBytes: SKILL_HTTP_MAX_BYTES },
    };
  }

  private async runCommand(spec: CommandExecutorSpec, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const { shell } = this.config.tools;
    // Asked here, on the event loop, before a pool thread is: a missing sandbox is a 503 saying how to fix it.
    const sandbox = await this.sandbox.specFor(ctx.tenantId);
    const quota = await this.storage.forCommand(ctx.tenantId, ctx.workspace);
    const request: SkillRunRequest = {
      spec,
      args,
      ...this.common(ctx),
      shell: {
        maxOutputBytes: shell.maxOutputBytes,
        limits: {
          maxProcesses: shell.maxProcesses,
          maxFileSizeBytes: shell.maxFileSizeBytes,
          cpuSeconds: cpuSecondsFor(ctx.timeoutMs, shell.maxCpuSeconds),
        },
        memoryBytes: shell.maxMemoryBytes,
        writes: { maxBytes: shell.maxWriteBytes, quota },
        sandbox,
      },
    };
    try {
      return await this.admission.run(ctx.tenantId, shell.maxMemoryBytes, ctx.timeoutMs, () => this.run(request, ctx));
    } finally {
      this.quota.forget(ctx.workspace);
    }
  }

  // An http executor only waits on the network, which the event loop does without a thread: in either mode
  // it never takes one of the pool's (a `sync` endpoint that never answers held one until its timeout).
  // A `sync` command counts against its tenant's share of the pool.
  private run(request: SkillRunRequest, ctx: ToolContext): Promise<unknown> {
    if (this.tool.spec.mode === 'sync' && request.spec.type !== 'http') {
      return this.pool.runCooperative('runSkillTool', request, ctx.signal, { key: ctx.tenantId });
    }
    return runSkillTool(request, ctx.signal);
  }

  // Forwarded with tools/call under the call's deadline and signal; the upstream's isError is the tool's error,
  // its progress reports the call's when the caller listens. The result is its structuredContent, else its
  // content as it came ({ content }), which the MCP endpoint relays unchanged (relaysMcpContent).
  private async callUpstream(
    spec: McpExecutorSpec,
    args: Record<string, unknown>,
    ctx: ToolContext,
    headers = spec.headers,
  ): Promise<unknown> {
    const target = { tenantId: ctx.tenantId, url: spec.url, headers };
    const asBefore = () =>
      this.upstreams.callTool(target, spec.tool, args, ctx.timeoutMs, ctx.signal, { onProgress: ctx.onProgress, logs: ctx.logs });
    // An MCP client of revision 2026-07-28 reaches a source of that revision at it (upstream-rounds.ts).
    const result = await callToolInRound(
      this.modern,
      asBefore,
      target,
      spec.tool,
      args,
      ctx,
      sourceIdentity(this.tool.definition.source, spec.url),
    );
    capResultContent(result, this.config.tools.mcpResultMaxContentItems);
    const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
    if (result.isError)
      throw new ToolError('upstream_error', text.slice(0, 8192) || `The tool '${spec.tool}' failed on the MCP server`, false);
    return result.structuredContent ?? { content: result.content };
  }

  // An MCP source that asks for OAuth: each request carries the token of the call's end user (or the
  // tenant's own), only to the server's host; after a 401 it is refreshed and the call tried once more.
  private async callUpstreamAsConnection(
    spec: McpExecutorSpec,
    auth: McpExecutorAuth,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<unknown> {
    const user = connectionUser(auth, ctx.user ?? null);
    const sent: string[] = [];
    try {
      const result = await withSourceToken(
        (stale) => sourceToken(this.tokens, ctx.tenantId, spec.url, auth, user, stale),
        (token) => this.callUpstream(spec, args, ctx, withBearer(spec.headers, token)),
        sent,
      );
      return withoutTokens(result, sent);
    } catch (error) {
      // A request for input is the source's answer, as a result is: it never shows the token either (its own state stays as it sent it).
      if (error instanceof InputRequired && error.required.inputRequests)
        throw new InputRequired({ ...error.required, inputRequests: withoutTokens(error.required.inputRequests, sent) as InputRequests });
      throw this.withoutOwnSecrets(error, sent);
    }
  }
}

type InputRequests = NonNullable<InputRequiredAnswer['inputRequests']>;
