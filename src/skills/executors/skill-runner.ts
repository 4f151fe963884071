import { createHmac } from 'node:crypto';
import type { MessagePort } from 'node:worker_threads';
import type { CancellablePayload } from '../../common/worker-pool/worker-pool.js';
import { resolveAllowedExecutable } from '../../execution/process/executable-allowlist.js';
import { limitOutcome, type CommandLimit } from '../../execution/process/limit-outcome.js';
import { runProcess, type ProcessLimits, type WriteLimits } from '../../execution/process/process-runner.js';
import type { SandboxSpec } from '../../execution/process/sandbox/sandbox-spec.js';
import { safeFetch } from '../../execution/net/safe-fetch.js';
import { ToolError } from '../../execution/tool-error.js';
import type { CommandExecutorSpec, HttpExecutorSpec, SkillExecutorSpec } from './executor-specs.js';
import { renderArgv } from './argv-template.js';
import { asCommandRefusal } from '../../tools/tools.errors.js';

// Everything one call of a skill tool needs, as plain data: it may cross into a pool thread.
export interface SkillRunRequest {
  spec: SkillExecutorSpec;
  args: Record<string, unknown>;
  signingSecret: string;
  invocationId: string;
  workspace: string;
  shellAllowlist: string[];
  timeoutMs: number;
  fetch: { allowHosts: string[]; maxBytes: number };
  // An http executor with auth: the connection's access token (its host was checked against the provider's apiHosts).
  bearer?: string;
  // Command executors only.
  shell?: { maxOutputBytes: number; limits: ProcessLimits; memoryBytes: number; writes: WriteLimits; sandbox: SandboxSpec };
}

// The error code a command skill answers when a limit stopped its command.
const LIMIT_ERRORS: Record<CommandLimit, string> = {
  output_limit: 'output_limit',
  process_limit: 'process_limit',
  memory_limit: 'memory_limit',
  cpu_limit: 'cpu_limit',
  write_limit: 'write_limit',
  workspace_quota: 'workspace_quota_exceeded',
};

export const signBody = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export function runSkillTool(request: SkillRunRequest, signal: AbortSignal): Promise<unknown> {
  if (request.spec.type === 'http') return callEndpoint(request, request.spec, signal);
  if (request.spec.type === 'command') return runCommand(request, request.spec, signal);
  // MCP tools keep a session open on the event loop (skill-tool.executor.ts); they never come here.
  return Promise.reject(new Error('MCP tools are called through UpstreamMcpClients'));
}

// The validated arguments go to the tenant's endpoint as JSON, signed so the receiver can tell the call
// is genuine; its answer (JSON or text) is the tool's result, a non-2xx answer the tool's error.
async function callEndpoint(request: SkillRunRequest, spec: HttpExecutorSpec, signal: AbortSignal): Promise<unknown> {
  const body = JSON.stringify(request.args);
  const response = await safeFetch(
    {
      url: spec.url,
      method: spec.method ?? 'POST',
      headers: {
        ...spec.headers,
        'content-type': 'application/json',
        'x-toolgate-signature': signBody(request.signingSecret, body),
        'x-toolgate-invocation-id': request.invocationId,
        ...(request.bearer !== undefined && { authorization: `Bearer ${request.bearer}` }),
      },
      body,
      timeoutMs: request.timeoutMs,
      maxBytes: request.fetch.maxBytes,
      signal,
    },
    { allowHosts: request.fetch.allowHosts, maxRedirects: 0 },
  );
  const json = /\bjson\b/i.test(response.headers['content-type'] ?? '') && !response.truncated;
  const content = json ? parseJson(response.body) : response.body;
  // The token was refused: the executor refreshes it once and calls again.
  if (request.bearer !== undefined && response.status === 401)
    throw new ToolError('endpoint_unauthorized', "The skill's endpoint answered 401 to the connection's token");
  if (response.status < 200 || response.status >= 300) {
    const detail = typeof content === 'string' ? content : JSON.stringify(content);
    throw new ToolError(
      'endpoint_error',
      `The skill's endpoint answered ${response.status}${detail ? `: ${detail.slice(0, 2000)}` : ''}`,
      response.status >= 500 || response.status === 429,
    );
  }
  return json ? content : { text: response.body, truncated: response.truncated };
}

async function runCommand(request: SkillRunRequest, spec: CommandExecutorSpec, signal: AbortSignal): Promise<unknown> {
  const { shell } = request;
  if (!shell) throw new Error('a command skill was dispatched without its shell settings');
  const argv = renderArgv(spec.argv, request.args);
  const executable = resolveAllowedExecutable(argv[0], request.shellAllowlist);
  const result = await runProcess({
    argv,
    executable,
    workspace: request.workspace,
    cwd: request.workspace,
    timeoutMs: request.timeoutMs,
    maxOutputBytes: shell.maxOutputBytes,
    signal,
    limits: shell.limits,
    memoryBytes: shell.memoryBytes,
    writes: shell.writes,
    sandbox: shell.sandbox,
  }).catch((err: unknown) => {
    throw asCommandRefusal(err);
  });
  if (result.timedOut) throw new ToolError('timeout', `The command did not finish within ${request.timeoutMs} ms and was killed`, true);
  // Killed because the caller went away: not a failure of the command.
  if (result.aborted) throw new ToolError('cancelled', 'The call was cancelled; the command was killed before it finished', true);
  const { killed, note } = limitOutcome(result, {
    maxOutputBytes: shell.maxOutputBytes,
    maxProcesses: shell.limits.maxProcesses,
    memoryBytes: shell.memoryBytes,
    cpuSeconds: shell.limits.cpuSeconds,
    maxWriteBytes: shell.writes.maxBytes,
    quotaBytes: shell.writes.quota?.bytes,
    quotaInodes: shell.writes.quota?.inodes,
  });
  if (killed && killed !== 'output_limit') throw new ToolError(LIMIT_ERRORS[killed], note ?? `The command was stopped by its ${killed}`);
  if (result.exitCode !== 0) {
    const why = result.exitCode === null ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
    throw new ToolError(
      'command_failed',
      `The command ${why}${result.stderr ? `: ${result.stderr.slice(-2000)}` : ''}${note ? ` (${note})` : ''}`,
    );
  }
  return {
    stdout: result.stdout,
    stderr: result.stderr,
    stdoutTruncated: result.stdoutTruncated,
    stderrTruncated: result.stderrTruncated,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// The pool-thread side of `mode: "sync"`: the caller's abort arrives as a message on `cancel`.
export async function runSkillToolInWorker(payload: SkillRunRequest & CancellablePayload): Promise<unknown> {
  const controller = new AbortController();
  const cancel: MessagePort = payload.cancel;
  cancel.once('message', () => controller.abort(new Error('cancelled')));
  try {
    return await runSkillTool(payload, controller.signal);
  } finally {
    cancel.close();
  }
}
