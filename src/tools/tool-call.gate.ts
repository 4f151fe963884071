import { randomUUID } from 'node:crypto';
import { createParamDecorator, type ExecutionContext, Injectable } from '@nestjs/common';
import type { InvocationChannel } from '../audit/audit.repository.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { AppError } from '../common/errors/app-error.js';
import { inSpan, tracingEnabled } from '../common/tracing/tracer.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';
import { WorkspaceResolver } from '../workspace/workspace-resolver.js';
import { type Caller, type CallIdentity, CallRecorder, TOOL_ARG_VALIDATION_FAILURE } from './call-recorder.js';
import type { ProjectSettings } from '../projects/project-access.js';
import { type RegisteredTool, ToolRegistry } from './tool-registry.js';
import type { ExposedTool, ToolCatalogue } from './tool-catalogue.js';
import type { ToolListeners } from '../execution/tool-definition.js';
import type { InputRound } from '../execution/input-required.js';
import { invalidCallBody, invalidCallTimeout, refusedCallStatus, unknownCallFields } from './tools.errors.js';
import { redactArguments, redactRawArguments, type RedactedArguments } from '../execution/validation/argument-redaction.js';
import { retoldAs } from '../execution/validation/validation-message.js';
import type { ToolRenames } from './exposed-texts.js';
import type { PolicyDecision } from '../policy/policy-set.js';
import { redactAppError, redactMessage, redactText } from '../common/secrets/secret-redaction.js';

// The key a call came with, as far as the call path needs it: who asked (every audit row names it, a parked
// call records it, and that key may never decide the call) and which tools it may use (null: all).
export interface CallPrincipal {
  apiKeyId: string;
  keyName: string;
  tools: readonly string[] | null;
  // Every call parks for a person's approval, whatever the project says.
  parksEveryCall?: boolean;
  // What the policies know of the key: its role, and the OAuth client an access token was issued to.
  role: string;
  oauthClient?: string | null;
  // The end user the call is for (Toolgate-User); absent: none named.
  user?: string;
}

const OAUTH_SUFFIX = ' (OAuth)';

export const principalOf = (tenant: Tenant): CallPrincipal => ({
  apiKeyId: tenant.apiKeyId,
  keyName: tenant.keyName,
  tools: tenant.tools,
  parksEveryCall: tenant.parksEveryCall === true,
  role: tenant.role,
  // An access token is a key named "<client> (OAuth)" (oauth-tokens.service.ts).
  oauthClient: tenant.oauthResource && tenant.keyName.endsWith(OAUTH_SUFFIX) ? tenant.keyName.slice(0, -OAUTH_SUFFIX.length) : null,
  ...(tenant.user !== undefined && { user: tenant.user }),
});

// ToolListeners: the progress the tool reports while it runs (MCP: the client sent a progressToken), and
// its log messages (MCP: the client set a level).
export interface RawToolCall extends ToolListeners {
  tenantId: string;
  projectId: string;
  principal: CallPrincipal;
  toolName: string;
  // REST: the invoke body, { arguments, timeoutMs? }; MCP: { arguments } from tools/call.
  body: unknown;
  channel: InvocationChannel;
  // A call through a toolset: the names, schemas and fixed arguments the model was shown (tool-catalogue.ts).
  catalogue?: ToolCatalogue;
  // MCP revision 2026-07-28: the client's round, for an MCP source of that revision (ToolContext.inputRound).
  inputRound?: InputRound;
}

// How a call through a catalogue reached its tool: audited beside the real tool's name, and answered under
// the shown names (`renames`: the real tools the model knows by other names, this one among them).
export interface ExposedAs {
  toolset: string;
  name: string;
  renames: ToolRenames;
}

export interface ValidatedToolCall extends ToolListeners {
  invocationId: string;
  channel: InvocationChannel;
  tenantId: string;
  projectId: string;
  principal: CallPrincipal;
  // Who the audit names as having made the call (a resumed call: whoever parked it).
  caller: Caller | null;
  tool: RegisteredTool;
  settings: ProjectSettings;
  workspace: string;
  args: Record<string, unknown>;
  // What the audit, the events and the logs may see of the arguments (computed once, here).
  redacted: RedactedArguments;
  timeoutMs: number;
  startedAt: Date;
  // Through a toolset: the name the model used, and the workspace directory the tool's paths are confined to.
  exposedAs: ExposedAs | null;
  pathPrefix: string | null;
  // What the policies decided (CallDispatcher), for the audit row; null or absent: no policy in force.
  policy?: PolicyDecision | null;
  inputRound?: InputRound;
  // Set by the run: the size of the result as JSON (exact, or a close lower bound), for what the call cost.
  resultBytes?: number;
}

// Collects what the gate below needs from the REST route: the tenant, the project, the tool and the body.
export const RestToolCall = createParamDecorator((_: unknown, ctx: ExecutionContext): RawToolCall => {
  const request = ctx.switchToHttp().getRequest<{ tenant: Tenant; params: Record<string, string>; body: unknown }>();
  return {
    tenantId: request.tenant.tenantId,
    projectId: request.params.projectId,
    principal: principalOf(request.tenant),
    toolName: request.params.toolName,
    body: request.body,
    channel: 'rest',
  };
});

// The gate in front of every executor, whatever the channel, in order: the project (404), the tool (404
// with suggestions), the commands rate limit for a tool that spawns processes (429), the body's envelope,
// then the arguments: a JSON object, no prototype keys, valid against the tool's compiled schema (422
// written for the model). A refused call is audited before the error leaves (a rate-limited one is not,
// as no request over the limit is).
@Injectable()
export class ToolCallGate {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly workspaces: WorkspaceResolver,
    private readonly recorder: CallRecorder,
    private readonly limiter: TenantRateLimiter,
  ) {}

  // `resume`: an approved call parked earlier, admitted again under its own id and audit row (its
  // commands were charged to the rate limit when it arrived).
  admit(call: RawToolCall, resume?: Resumed): Promise<ValidatedToolCall> {
    if (!tracingEnabled()) return this.check(call, resume);
    return inSpan('toolgate.validate', { 'toolgate.tool': call.toolName.slice(0, 128), 'toolgate.channel': call.channel }, () =>
      this.check(call, resume),
    );
  }

  private async check(call: RawToolCall, resume?: Resumed): Promise<ValidatedToolCall> {
    const startedAt = resume?.startedAt ?? new Date();
    const invocationId = resume?.invocationId ?? randomUUID();
    const project = await this.registry.forProject(call.tenantId, call.projectId);
    const catalogue = call.catalogue;
    const caller = resume ? resume.caller : { keyId: call.principal.apiKeyId, name: call.principal.keyName };
    const identity: CallIdentity = {
      tenantId: call.tenantId,
      projectId: call.projectId,
      invocationId,
      tool: call.toolName.slice(0, 128),
      channel: call.channel,
      caller,
    };
    if (catalogue) identity.toolset = catalogue.toolset;
    if (call.principal.user !== undefined) identity.user = call.principal.user;
    let body = (call.body ?? {}) as { arguments?: unknown; timeoutMs?: unknown };
    let tool: RegisteredTool | undefined;
    let exposed: ExposedTool | null = null;
    let renames: ToolRenames = NO_RENAMES;
    try {
      // A tool outside the key's binding is not there, for this key: refused like a missing one.
      const tools = ToolRegistry.restrict(project, call.principal.tools);
      if (catalogue) {
        const view = catalogue.view(tools.tools);
        // call_tool {name, arguments} is judged as a call of that tool, refusals included.
        const dispatched = view.dispatch(call.toolName, body.arguments);
        if (dispatched) body = { ...body, arguments: dispatched.arguments };
        const name = dispatched?.name ?? call.toolName;
        identity.tool = identity.exposedTool = name.slice(0, 128);
        exposed = view.find(name);
        tool = exposed.tool;
        renames = renamesFor(view.renames, exposed);
        identity.tool = tool.executor.definition.name;
        identity.exposedTool = exposed.name;
      } else {
        tool = ToolRegistry.pick(tools, call.toolName);
      }
    } catch (error) {
      throw await this.refused(identity, error, body, exposed?.tool, startedAt);
    }
    if (tool.executor.spawnsProcesses === true && !resume) await this.limiter.chargeCommand(call.tenantId);
    try {
      checkEnvelope(call.body);
      const timeoutMs = callTimeout(body.timeoutMs, tool.executor.definition.timeoutMs);
      // An approved call comes back with the arguments as they ran.
      const args = exposed && !resume ? exposedArguments(exposed, body.arguments) : tool.validator.parse(body.arguments);
      const { path: workspace } = await this.workspaces.resolve(call.tenantId, call.projectId);
      // Text arguments (OpenAI style) stay text in the audit, redacted as their value.
      const redacted = redactArguments(args, tool.validator.redaction);
      if (typeof body.arguments === 'string') redacted.value = redacted.paths.length > 0 ? JSON.stringify(redacted.value) : body.arguments;
      const admitted: ValidatedToolCall = {
        invocationId,
        channel: call.channel,
        tenantId: call.tenantId,
        projectId: call.projectId,
        principal: call.principal,
        caller,
        tool,
        settings: project.settings,
        workspace,
        args,
        redacted,
        timeoutMs,
        startedAt,
        exposedAs: exposed && catalogue ? { toolset: catalogue.toolset, name: exposed.name, renames } : (resume?.exposedAs ?? null),
        pathPrefix: exposed ? exposed.pathPrefix : (resume?.pathPrefix ?? null),
      };
      if (call.onProgress) admitted.onProgress = call.onProgress;
      if (call.logs) admitted.logs = call.logs;
      if (call.inputRound) admitted.inputRound = call.inputRound;
      return admitted;
    } catch (error) {
      throw await this.refused(identity, error, body, tool, startedAt);
    }
  }

  // Audits a refusal and answers the error to throw: redacted like the audit row, since the caller's answer,
  // an MCP result, the validate span and a stored outcome all carry it (a message quoting a redacted value,
  // e.g. "got 'sk-…'", says which parameter and why without it).
  private async refused(
    identity: CallIdentity,
    error: unknown,
    body: { arguments?: unknown },
    tool: RegisteredTool | undefined,
    startedAt: Date,
  ): Promise<unknown> {
    if (!(error instanceof AppError)) return error;
    // A name that matched no tool is only what the caller typed: one shaped like a credential (a key pasted
    // into the tool's place) is kept in the row as the message has it, redacted.
    const recorded: CallIdentity =
      error.code === 'tool_not_found'
        ? {
            ...identity,
            tool: redactText(identity.tool),
            ...(identity.exposedTool !== undefined && { exposedTool: redactText(identity.exposedTool) }),
          }
        : identity;
    // An unknown tool has no schema: its arguments are still redacted by key name and value.
    const args = redactRawArguments(body.arguments, tool?.validator.redaction ?? null);
    const refusal = redactAppError(error, (text) => redactMessage(text, args.secrets));
    await this.recorder.finished(recorded, {
      status: refusedCallStatus(error),
      event: error.code === 'invalid_arguments' ? TOOL_ARG_VALIDATION_FAILURE : undefined,
      error: { code: refusal.code, message: refusal.message },
      arguments: args,
      startedAt,
    });
    return refusal;
  }
}

// An approved call parked earlier: its id and audit row, who made it, and where a toolset had confined it.
export interface Resumed {
  invocationId: string;
  startedAt: Date;
  caller: Caller | null;
  exposedAs?: ExposedAs | null;
  pathPrefix?: string | null;
}

const NO_RENAMES: ToolRenames = new Map();

// The view's renames, with the called tool under the name it was called by (a tool shown under two names).
function renamesFor(renames: ToolRenames, exposed: ExposedTool): ToolRenames {
  const real = exposed.tool.executor.definition.name;
  if (real === exposed.name || renames.get(real) === exposed.name) return renames;
  return new Map([...renames, [real, exposed.name]]);
}

// Through a toolset: the model's arguments against what it was shown, then the fixed ones added, then the
// real tool's own check, whose refusal is told as the model saw the tool (its name and usage, and nothing
// of the fixed arguments it never saw: a schema may tie a fixed value to what the model sends).
function exposedArguments(exposed: ExposedTool, raw: unknown): Record<string, unknown> {
  const args = withFixed(exposed.validator.parse(raw), exposed.fixedArguments);
  try {
    return exposed.tool.validator.parse(args);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw retoldAs(error, { name: exposed.name, usage: exposed.validator.usage }, Object.keys(exposed.fixedArguments ?? {}));
  }
}

// The fixed arguments win over anything the model sent under their names.
function withFixed(args: Record<string, unknown>, fixed: Readonly<Record<string, unknown>> | null): Record<string, unknown> {
  return fixed === null ? args : { ...args, ...structuredClone(fixed) };
}

function checkEnvelope(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidCallBody();
  }
  const unknown = Object.keys(body).filter((k) => k !== 'arguments' && k !== 'timeoutMs');
  if (unknown.length > 0) {
    throw unknownCallFields(unknown);
  }
}

function callTimeout(requested: unknown, toolTimeoutMs: number): number {
  if (requested === undefined) return toolTimeoutMs;
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1) {
    throw invalidCallTimeout();
  }
  return Math.min(requested, toolTimeoutMs);
}
