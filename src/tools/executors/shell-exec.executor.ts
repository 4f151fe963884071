import { Inject, Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { CommandSandbox } from '../../sandbox/command-sandbox.js';
import { resolveWorkspaceDirectory } from '../../workspace/fs/workspace-fs.js';
import { WorkspaceQuota } from '../../workspace/workspace-quota.js';
import { TenantStorage } from '../../workspace/tenant-storage.js';
import { CommandAdmission } from '../../budgets/command-admission.js';
import { resolveAllowedExecutable, shellDisabled } from '../../execution/process/executable-allowlist.js';
import { limitOutcome } from '../../execution/process/limit-outcome.js';
import { describeBytes } from '../../common/format/describe-bytes.js';
import { cpuSecondsFor } from '../../execution/process/process-limits.js';
import { runProcess, validateEnv } from '../../execution/process/process-runner.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { SHELL_TOOL_DEFAULT_TIMEOUT_MS, SHELL_TOOL_MAX_TIMEOUT_MS } from '../tools.config.js';
import { ToolError } from '../../execution/tool-error.js';
import { asCommandRefusal } from '../tools.errors.js';

interface ShellExecArgs {
  argv: string[];
  cwd?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
  stdin?: string;
}

@Injectable()
export class ShellExecExecutor implements ToolExecutor<ShellExecArgs> {
  readonly spawnsProcesses = true;
  readonly definition: ToolDefinition = {
    name: 'shell_exec',
    ...BUILTIN_OUTPUTS.shell_exec,
    description:
      "Run one command in the project workspace, given as an argv array (no shell: ';', '|', '$()' are plain characters). Only executables on the project's allow-list run. Answers the exit code, the signal, stdout and stderr (capped, marked truncated); `killed` and `note` say when a limit (output, processes, memory, CPU time, bytes written, the workspace quota) stopped it.",
    inputSchema: {
      type: 'object',
      properties: {
        argv: {
          type: 'array',
          items: { type: 'string', maxLength: 32768 },
          minItems: 1,
          maxItems: 1024,
          description: 'The command and its arguments, e.g. ["git", "status", "--short"]',
        },
        cwd: { type: 'string', minLength: 1, maxLength: 8192, description: 'Working directory inside the workspace (default: its root)' },
        timeoutMs: {
          type: 'integer',
          minimum: 100,
          maximum: SHELL_TOOL_MAX_TIMEOUT_MS,
          description: `Kill the command after this long (default ${SHELL_TOOL_DEFAULT_TIMEOUT_MS})`,
        },
        env: {
          type: 'object',
          // Environment variables are where commands take credentials: every value is redacted from the
          // audit, events, logs and messages, whatever its name.
          additionalProperties: { type: 'string', maxLength: 32768, writeOnly: true },
          propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 128 },
          maxProperties: 64,
          description: 'Extra environment variables (the command otherwise gets a minimal environment)',
        },
        stdin: { type: 'string', maxLength: 1048576, description: 'Text written to the standard input' },
      },
      required: ['argv'],
      additionalProperties: false,
    },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
    timeoutMs: SHELL_TOOL_MAX_TIMEOUT_MS,
    source: 'builtin',
  };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: CommandSandbox,
    private readonly quota: WorkspaceQuota,
    private readonly storage: TenantStorage,
    private readonly admission: CommandAdmission,
  ) {}

  async execute(args: ShellExecArgs, ctx: ToolContext) {
    if (!ctx.project.shellEnabled) throw shellDisabled(this.definition.name);
    const sandbox = await this.sandbox.specFor(ctx.tenantId);
    const executable = resolveAllowedExecutable(args.argv[0], ctx.project.shellAllowlist);
    try {
      if (args.env) validateEnv(args.env);
    } catch (err) {
      throw asCommandRefusal(err);
    }
    const cwd = args.cwd ? await resolveWorkspaceDirectory(ctx.workspace, args.cwd) : ctx.workspace;
    const { shell } = this.config.tools;
    const timeoutMs = Math.min(args.timeoutMs ?? SHELL_TOOL_DEFAULT_TIMEOUT_MS, ctx.timeoutMs);
    const cpuSeconds = cpuSecondsFor(timeoutMs, shell.maxCpuSeconds);
    // The workspace's quota, or less where the tenant's storage budget leaves less room.
    const quota = await this.storage.forCommand(ctx.tenantId, ctx.workspace);
    let result;
    try {
      // Counted against the tenant's concurrentCommands and commandMemoryBytes on every instance.
      result = await this.admission.run(ctx.tenantId, shell.maxMemoryBytes, timeoutMs, () =>
        runProcess({
          argv: args.argv,
          executable,
          workspace: ctx.workspace,
          cwd,
          env: args.env,
          stdin: args.stdin,
          timeoutMs,
          maxOutputBytes: shell.maxOutputBytes,
          signal: ctx.signal,
          limits: { maxProcesses: shell.maxProcesses, maxFileSizeBytes: shell.maxFileSizeBytes, cpuSeconds },
          memoryBytes: shell.maxMemoryBytes,
          writes: { maxBytes: shell.maxWriteBytes, quota },
          sandbox,
        }),
      );
    } catch (err) {
      this.quota.forget(ctx.workspace);
      throw asCommandRefusal(err);
    }
    // A run stopped for the quota is known to be past it, so that workspace is walked again before its next
    // write. Otherwise the workspace's figure grows by what the run added at most.
    if (result.killedForWorkspaceQuota) this.quota.forget(ctx.workspace);
    else {
      const grown = result.workspaceGrowthAtMost;
      this.quota.afterCommand(ctx.workspace, grown?.bytes ?? null, grown?.entries ?? null);
    }
    if (result.aborted)
      throw new ToolError('cancelled', 'The call was cancelled before the command finished; the command was stopped', true);
    if (result.timedOut) {
      // What it printed before it was killed is often what the model needs to see why it hung.
      const tail = (result.stderr || result.stdout).slice(-1000);
      throw new ToolError(
        'timeout',
        `The command did not finish within ${timeoutMs} ms and was killed${tail ? `; its last output: ${tail}` : ''}`,
        true,
      );
    }
    const outcome = limitOutcome(result, {
      maxOutputBytes: shell.maxOutputBytes,
      maxProcesses: shell.maxProcesses,
      memoryBytes: shell.maxMemoryBytes,
      cpuSeconds,
      maxWriteBytes: shell.maxWriteBytes,
      quotaBytes: quota.bytes,
      quotaInodes: quota.inodes,
    });
    const { killed } = outcome;
    // Where the tenant's budget, not the workspace's quota, set the bound, the note names the budget.
    const passed = result.workspaceQuotaPassed === 'inodes' ? 'inodes' : 'bytes';
    const note = killed === 'workspace_quota' && quota.tenantBound[passed] ? tenantBudgetNote(passed, quota.budget) : outcome.note;
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      stdout: result.stdout,
      stderr: result.stderr,
      stdoutTruncated: result.stdoutTruncated,
      stderrTruncated: result.stderrTruncated,
      killed,
      note,
      durationMs: result.durationMs,
    };
  }
}

function tenantBudgetNote(passed: 'bytes' | 'inodes', budget: { storageBytes: number; storageInodes: number }): string {
  const which =
    passed === 'inodes'
      ? `storageInodes budget (${budget.storageInodes.toLocaleString('en-US')} files, directories and links)`
      : `storageBytes budget (${describeBytes(budget.storageBytes)})`;
  return `The command was stopped: it grew the workspace past the room the tenant's ${which} leaves (all its projects' workspaces together); delete files that are no longer needed.`;
}
