import { ApprovalRoutesModule } from '../approval-routes/approval-routes.module.js';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ToolEvents } from './events/tool-events.js';
import { ToolEventsService } from './events/tool-events.service.js';
import { DeleteFileExecutor } from './executors/delete-file.executor.js';
import { EditFileExecutor } from './executors/edit-file.executor.js';
import { MoveFileExecutor } from './executors/move-file.executor.js';
import { ReadMultipleFilesExecutor } from './executors/read-multiple-files.executor.js';
import { SearchFilesExecutor } from './executors/search-files.executor.js';
import { FetchUrlExecutor } from './executors/fetch-url.executor.js';
import { ListFilesExecutor } from './executors/list-files.executor.js';
import { ReadFileExecutor } from './executors/read-file.executor.js';
import { ShellExecExecutor } from './executors/shell-exec.executor.js';
import { WriteFileExecutor } from './executors/write-file.executor.js';
import { CallParking } from './call-parking.js';
import { InFlightCalls } from './in-flight-calls.js';
import { CallRecorder } from './call-recorder.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ToolCallGate } from './tool-call.gate.js';
import { CallDispatcher } from './call-dispatcher.js';
import { ToolRunner } from './tool-runner.js';
import { ToolRegistry } from './tool-registry.js';
import { ProjectAccessModule } from '../projects/project-access.module.js';
import { PolicyEngineModule } from '../policy/policy-engine.module.js';

@Module({
  imports: [ProjectAccessModule, WorkspaceModule, AuditModule, SkillsModule, RateLimitModule, PolicyEngineModule, ApprovalRoutesModule],
  providers: [
    ReadFileExecutor,
    WriteFileExecutor,
    ListFilesExecutor,
    DeleteFileExecutor,
    ShellExecExecutor,
    FetchUrlExecutor,
    EditFileExecutor,
    SearchFilesExecutor,
    MoveFileExecutor,
    ReadMultipleFilesExecutor,
    ToolRegistry,
    ToolCallGate,
    CallDispatcher,
    CallParking,
    ToolEvents,
    ToolEventsService,
    CallRecorder,
    InFlightCalls,
    ToolRunner,
  ],
  exports: [ToolRegistry, ToolEvents, ToolEventsService, InFlightCalls, CallDispatcher, CallRecorder],
})
export class ToolsModule {}
