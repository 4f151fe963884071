import { Injectable } from '@nestjs/common';
import type { InvocationResultDto, PendingApprovalDto } from './dto/tool.dto.js';
import { type RawToolCall, ToolCallGate } from './tool-call.gate.js';
import { ToolInvocationService } from './tool-invocation.service.js';

// What a call that was admitted answers: the outcome of its run, or its parking for approval.
export type ToolCallOutcome = InvocationResultDto | PendingApprovalDto;

// The one path a tool call takes, whichever channel brought it (REST invoke, MCP tools/call): the gate
// (project, tool, commands rate limit, arguments, workspace), then the run (deadline, cancellation,
// audit row with the channel, events). A refusal is an AppError; a tool that ran answers its outcome.
@Injectable()
export class ToolCallsService {
  constructor(
    private readonly gate: ToolCallGate,
    private readonly invocations: ToolInvocationService,
  ) {}

  // `controller` is aborted when the client goes away; the run aborts it too at the deadline.
  async call(request: RawToolCall, controller: AbortController): Promise<InvocationResultDto> {
    return this.invocations.invoke(await this.gate.admit(request), controller);
  }
}
