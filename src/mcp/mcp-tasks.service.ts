import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { JSONRPCRequest, Result, Server, ServerContext } from '@modelcontextprotocol/server';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalsService } from '../calls/approvals.service.js';
import { type AnswerRoom, notKeptMessage, StoredAnswers } from '../budgets/stored-answers.js';
import { describeBytes } from '../common/format/describe-bytes.js';
import { CallAdmission } from '../budgets/call-admission.js';
import { AppError } from '../common/errors/app-error.js';
import type { InvocationResultDto, PendingApprovalDto } from '../tools/dto/tool.dto.js';
import type { Prisma } from '../generated/prisma/client.js';
import { fromInvocation, INVOCATION_ID_META, notKeptResult, PENDING_APPROVAL_META, type ResultShape } from './mcp-tool-results.js';
import { McpTasksRepository, type TaskOwner, type TaskWithCall } from './mcp-tasks.repository.js';
import { legacyStatus, legacyTask, modernTask, parseCursor, type TaskState } from './mcp-task-shapes.js';

// The tasks of MCP: a tools/call answered with a handle the client polls instead of its result. Revision
// 2025-11-25 (experimental there): the client asks for one with params.task on a tool tools/list marks
// taskSupport "optional"; tasks/get, tasks/result (waits for the end), tasks/list, tasks/cancel. Revision
// 2026-07-28 (the io.modelcontextprotocol/tasks extension): the client declares the extension in the
// request's _meta and the server decides; Toolgate answers a task only for a call parked for approval;
// tasks/get carries the result, tasks/update and tasks/cancel are acknowledged. A parked call is its task's
// state, in the database, so any instance answers any poll; the task id is random and answers only to the
// key that made the call, in its project: anyone else gets the error an unknown id gets.
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const MISSING_CLIENT_CAPABILITY = -32021;
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';
const IMMEDIATE_RESPONSE_META = 'io.modelcontextprotocol/model-immediate-response';
// How often a waiting tasks/result looks again (the decision may be taken on another instance).
const RESULT_RECHECK_MS = 500;
// A task is kept this long after its call's own deadline (the approval's expiry), for the client to fetch
// the result; a call that ran at once keeps its result this long.
const RETAINED_MS = 60 * 60_000;
const LIST_PAGE = 50;
// Each waiting tasks/result reads the database twice a second and holds a connection open: a key may keep
// this many waiting on one instance; past that it is told to poll with tasks/get.
const WAITING_PER_KEY = 8;
const SWEEP_EVERY_MS = 10 * 60_000;

export interface TaskCaller extends TaskOwner {
  keyName: string;
}

// What the endpoint declares. 2025-11-25: tools/call may be augmented, tasks are listed and cancelled.
// 2026-07-28: the extension, in server/discover.
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
export const MODERN_TASKS_CAPABILITY = { [TASKS_EXTENSION]: {} };

// Whether a request of revision 2026-07-28 declares the extension in its per-request client capabilities.
export function declaresTasks(params: Record<string, unknown>): boolean {
  const meta = params._meta as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined;
  const declared = meta?.[CLIENT_CAPABILITIES_META]?.extensions?.[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null && !Array.isArray(declared);
}

const notFound = () => new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');

@Injectable()
export class McpTasks implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('McpTasks');
  private sweeper: NodeJS.Timeout | undefined;
  // Aborted when the instance stops: a tasks/result still waiting answers then, so the server can close.
  private readonly stopping = new AbortController();
  // Waiting tasks/result requests on this instance, by key.
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly tasks: McpTasksRepository,
    private readonly approvals: ApprovalsService,
    private readonly storedAnswers: StoredAnswers,
    private readonly admission: CallAdmission,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
    this.stopping.abort();
  }

  // 2025-11-25, a tools/call with params.task: the call has run or parked (`result`); its CreateTaskResult.
  async createLegacy(caller: TaskCaller, result: CallToolResult, shape: ResultShape): Promise<Record<string, unknown>> {
    const task = await this.taskFor(caller, result, shape);
    const text = result.content[0]?.type === 'text' ? result.content[0].text : undefined;
    return { task: legacyTask(task, this.state(task)), ...(text !== undefined ? { _meta: { [IMMEDIATE_RESPONSE_META]: text } } : {}) };
  }

  // 2025-11-25, before a task-augmented tools/call runs: a task keeps its result for RETAINED_MS, so while the
  // tenant's stored answers fill storedAnswerBytes the call is refused (it does not run), as a keyed call is.
  async assertRoomForResult(tenantId: string): Promise<void> {
    const full = await this.storedAnswers.full(tenantId);
    if (!full) return;
    throw new McpError(
      ErrorCode.InvalidRequest,
      `The call did not run: a task keeps its result for an hour, and the tenant's stored answers (${describeBytes(full.stored)}) fill its storedAnswerBytes budget of ${describeBytes(full.budget)}. Call without params.task, or wait for stored answers to expire.`,
    );
  }

  // 2026-07-28, a tools/call from a client that declared the extension: a task when the call parked, else
  // the result itself (the server decides; a call that ran needs no handle).
  async answerModern(caller: TaskCaller, result: CallToolResult, shape: ResultShape): Promise<CallToolResult | Record<string, unknown>> {
    if (!pendingOf(result)) return result;
    const task = await this.taskFor(caller, result, shape);
    return { resultType: 'task', ...modernTask(task, this.state(task)) };
  }

  // 2025-11-25: the task methods on the POST's SDK Server. `gone`: the client went away or its key ended;
  // `guarded`: the endpoint's own wrapper (nothing unexpected reaches a client).
  serveLegacy(server: Server, caller: TaskCaller, gone: AbortSignal, guarded: <T>(answer: Promise<T>) => Promise<T>): void {
    // The v2 SDK still parses these methods by the 2025-11-25 schemas (so a malformed one is refused as
    // before), but leaves them out of its typed handler map: they are registered through this view of it.
    const serve = server.setRequestHandler.bind(server) as (
      method: string,
      handler: (request: TaskRequest, ctx: ServerContext) => Promise<Result>,
    ) => void;
    serve('tasks/get', (request) => guarded(this.getLegacy(caller, request.params?.taskId)));
    serve('tasks/result', (request, ctx) =>
      guarded(this.resultLegacy(caller, request.params?.taskId, AbortSignal.any([ctx.mcpReq.signal, gone]))),
    );
    serve('tasks/list', (request) => guarded(this.listLegacy(caller, request.params?.cursor)));
    serve('tasks/cancel', (request) => guarded(this.cancelLegacy(caller, request.params?.taskId)));
  }

  // 2026-07-28: the extension's methods (the endpoint has checked the client declares it).
  answerModernMethod(
    caller: TaskCaller,
    method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
    taskId: unknown,
  ): Promise<Record<string, unknown>> {
    switch (method) {
      case 'tasks/get':
        return this.getModern(caller, taskId);
      case 'tasks/update':
        return this.updateModern(caller, taskId);
      case 'tasks/cancel':
        return this.cancelModern(caller, taskId);
    }
  }

  private async getLegacy(caller: TaskCaller, taskId: unknown): Promise<Record<string, unknown>> {
    const task = await this.find(caller, taskId);
    return legacyTask(task, this.state(task));
  }

  private async getModern(caller: TaskCaller, taskId: unknown): Promise<Record<string, unknown>> {
    const task = await this.find(caller, taskId);
    return modernTask(task, this.state(task));
  }

  // 2025-11-25 tasks/result: waits until the task ends (a person decides, the call runs, or it expires and
  // the sweeper says so), then answers what tools/call would have: the result, or the refusal as an error
  // result; marked with the task it belongs to. `signal`: the client went away.
  private async resultLegacy(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<CallToolResult> {
    const waiting = this.waiting.get(caller.apiKeyId) ?? 0;
    if (waiting >= WAITING_PER_KEY) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `This key already has ${WAITING_PER_KEY} tasks/result requests waiting; poll with tasks/get, then ask for the result once the task has ended`,
      );
    }
    this.waiting.set(caller.apiKeyId, waiting + 1);
    let release: (() => void) | undefined;
    try {
      // A waiting tasks/result is a call in progress: it holds a concurrentCalls place, so what a tenant's
      // waiters answer at once (each the call's whole result) stays within what its budgets allow.
      release = await this.admission.admit(caller.tenantId).catch((error: unknown) => {
        throw error instanceof AppError ? new McpError(ErrorCode.InvalidRequest, error.message) : error;
      });
      return await this.waitForResult(caller, taskId, AbortSignal.any([signal, this.stopping.signal]));
    } finally {
      release?.();
      const left = (this.waiting.get(caller.apiKeyId) ?? 1) - 1;
      if (left === 0) this.waiting.delete(caller.apiKeyId);
      else this.waiting.set(caller.apiKeyId, left);
    }
  }

  private async waitForResult(caller: TaskCaller, taskId: unknown, waited: AbortSignal): Promise<CallToolResult> {
    for (;;) {
      const task = await this.find(caller, taskId);
      const state = this.state(task);
      if (state.phase !== 'working' && state.result) {
        return { ...state.result, _meta: { ...state.result._meta, [RELATED_TASK_META]: { taskId: task.id } } };
      }
      try {
        await sleep(RESULT_RECHECK_MS, undefined, { signal: waited });
      } catch {
        if (this.stopping.signal.aborted)
          throw new McpError(ErrorCode.InternalError, 'This instance is stopping; send tasks/result again (any instance answers it)');
        throw new McpError(ErrorCode.ConnectionClosed, 'The client went away');
      }
    }
  }

  private async listLegacy(caller: TaskCaller, cursor: unknown): Promise<Record<string, unknown>> {
    const before = cursor === undefined ? null : parseCursor(cursor);
    const page = await this.tasks.list(ownerOf(caller), LIST_PAGE + 1, before);
    const shown = page.slice(0, LIST_PAGE);
    const last = shown.at(-1);
    return {
      tasks: shown.map((task) => legacyTask(task, this.state(task))),
      ...(page.length > LIST_PAGE && last
        ? { nextCursor: Buffer.from(`${last.createdAt.toISOString()}|${last.id}`).toString('base64url') }
        : {}),
    };
  }

  // 2025-11-25 tasks/cancel: a call still waiting for a person is withdrawn (denied by its own key, audited)
  // and the task answered cancelled. One that has ended cannot be (-32602, as the revision says); nor can
  // one approved and running, which Toolgate does not stop halfway (-32602, saying so).
  private async cancelLegacy(caller: TaskCaller, taskId: unknown): Promise<Record<string, unknown>> {
    const task = await this.find(caller, taskId);
    if (!(await this.withdraw(caller, task))) {
      const now = this.state(await this.find(caller, taskId));
      const status = legacyStatus(now);
      if (now.phase !== 'working')
        throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
      throw new McpError(
        ErrorCode.InvalidParams,
        'Cannot cancel task: a person approved the call and it is running; it will end on its own',
      );
    }
    const cancelled = await this.find(caller, taskId);
    return legacyTask(cancelled, this.state(cancelled));
  }

  // 2026-07-28 tasks/cancel: cooperative, acknowledged whatever happens; a call still waiting is withdrawn.
  private async cancelModern(caller: TaskCaller, taskId: unknown): Promise<Record<string, never>> {
    await this.withdraw(caller, await this.find(caller, taskId));
    return {};
  }

  // 2026-07-28 tasks/update: a Toolgate task never asks the client for input (a person decides elsewhere),
  // so every response is to a key that is not outstanding, which the extension says to ignore.
  private async updateModern(caller: TaskCaller, taskId: unknown): Promise<Record<string, never>> {
    await this.find(caller, taskId);
    return {};
  }

  private async withdraw(caller: TaskCaller, task: TaskWithCall): Promise<boolean> {
    if (task.status !== 'parked' || task.invocationId === null || task.call?.status !== 'pending') return false;
    const withdrawn = await this.approvals.withdraw(caller.tenantId, caller.projectId, task.invocationId, {
      keyId: caller.apiKeyId,
      name: caller.keyName,
    });
    if (withdrawn === null) return false;
    await this.tasks.cancel(ownerOf(caller), task.id);
    return true;
  }

  // One call, one task: a parked call replayed by its Idempotency-Key answers the task it already has.
  private async taskFor(caller: TaskCaller, result: CallToolResult, shape: ResultShape): Promise<TaskWithCall> {
    const owner = ownerOf(caller);
    const pending = pendingOf(result);
    const id = randomBytes(24).toString('base64url');
    const kept = { outputSchema: shape.outputSchema, relaysContent: shape.relaysContent };
    if (pending) {
      const existing = await this.tasks.findByInvocation(owner, pending.invocationId);
      const expiresAt = new Date(Date.parse(pending.expiresAt) + RETAINED_MS);
      const task =
        existing ??
        (await this.tasks.create(owner, {
          id,
          invocationId: pending.invocationId,
          status: 'parked',
          shape: kept,
          result: null,
          expiresAt,
        }));
      return (await this.tasks.find(owner, task.id)) ?? { ...task, call: null };
    }
    // The result is kept for RETAINED_MS within the tenant's storedAnswerBytes; one that does not fit is kept
    // as an error result saying so (the call ran once; its audit row has what it did).
    const expiresAt = new Date(Date.now() + RETAINED_MS);
    const bytes = Buffer.byteLength(JSON.stringify(result));
    const task = await this.storedAnswers.keep(caller.tenantId, bytes, (tx, room) => {
      const stored = room.fits ? result : notKept(result, shape, bytes, room);
      return this.tasks.create(
        owner,
        {
          id,
          invocationId: null,
          status: 'done',
          shape: kept,
          result: stored as unknown as Prisma.InputJsonObject,
          resultBytes: room.fits ? bytes : Buffer.byteLength(JSON.stringify(stored)),
          expiresAt,
        },
        tx,
      );
    });
    if (task === false) throw notFound();
    return { ...task, call: null };
  }

  private async find(caller: TaskCaller, taskId: unknown): Promise<TaskWithCall> {
    if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 64) throw notFound();
    const task = await this.tasks.find(ownerOf(caller), taskId);
    if (!task) throw notFound();
    return task;
  }

  private state(task: TaskWithCall): TaskState {
    const call = task.call;
    const decidedAt = call?.decidedAt ?? null;
    const updatedAt = decidedAt && decidedAt > task.updatedAt ? decidedAt : task.updatedAt;
    const shape = task.shape as unknown as ResultShape;
    if (task.invocationId === null) return { phase: 'done', result: task.result as unknown as CallToolResult, updatedAt };
    const outcome = call?.outcome as unknown as InvocationResultDto | null | undefined;
    const result = outcome ? fromInvocation(outcome, shape) : undefined;
    if (task.status === 'cancelled')
      return { phase: 'cancelled', message: 'Withdrawn before anyone decided; the call did not run.', result, updatedAt };
    if (!call) return { phase: 'cancelled', message: 'The parked call is gone; it did not run.', updatedAt };
    if (call.status === 'pending') {
      return {
        phase: 'working',
        message: `Awaits approval by a person (invocation ${call.id}); it has not run. Undecided by ${call.expiresAt.toISOString()}, it expires.`,
        updatedAt,
      };
    }
    // Decided, its outcome not written yet (a denial's is written just after the decision).
    if (!result)
      return {
        phase: 'working',
        message: call.status === 'approved' ? 'Approved by a person; running.' : 'Decided; its outcome is being recorded.',
        updatedAt,
      };
    const message = outcome?.status === 'ok' ? 'Approved and run.' : outcome?.error?.message;
    return { phase: 'done', result, updatedAt, ...(message ? { message } : {}) };
  }

  private async sweep(): Promise<void> {
    try {
      await this.tasks.deleteExpired();
    } catch (error) {
      this.logger.warn(`Deleting expired MCP tasks failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

// A tasks/* request as the SDK hands it over, parsed by its 2025-11-25 schema.
type TaskRequest = JSONRPCRequest & { params?: { taskId?: unknown; cursor?: unknown } };

const ownerOf = (caller: TaskCaller): TaskOwner => ({ tenantId: caller.tenantId, projectId: caller.projectId, apiKeyId: caller.apiKeyId });

// The pending approval a call answered, if it parked (mcp-tool-results.ts puts it in _meta).
const pendingOf = (result: CallToolResult): PendingApprovalDto | undefined =>
  result._meta?.[PENDING_APPROVAL_META] as PendingApprovalDto | undefined;

// The result a task keeps when the call's own did not fit in the tenant's storedAnswerBytes.
function notKept(result: CallToolResult, shape: ResultShape, bytes: number, room: AnswerRoom): CallToolResult {
  const id = result._meta?.[INVOCATION_ID_META];
  const invocationId = typeof id === 'string' ? id : 'unknown';
  const message = notKeptMessage({ status: result.isError ? 'error' : 'ok', invocationId }, bytes, room);
  return notKeptResult(message, invocationId, shape.outputSchema);
}
