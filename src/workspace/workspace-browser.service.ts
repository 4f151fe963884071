import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { AppError } from '../common/errors/app-error.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { WorkspaceWorkerTasks } from './workspace-worker-tasks.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { WorkspaceFileDto, WorkspaceListingDto } from './dto/workspace-files.dto.js';
import { WorkspaceFsError } from './fs/workspace-fs.js';
import { WorkspaceReadThreads } from './read-threads/workspace-read-threads.js';
import { listRecursively } from './recursive-listing.js';
import { WorkspaceResolver } from './workspace-resolver.js';
import { workspaceFsRefusal } from './workspace.errors.js';

// Entries in one listing answer for the dashboard; `truncated` says when there are more.
const LISTING_LIMIT = 5_000;

// Read-only browsing of a project's workspace for the dashboard, confined like the file tools.
@Injectable()
export class WorkspaceBrowserService {
  constructor(
    private readonly resolver: WorkspaceResolver,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>,
    private readonly reads: WorkspaceReadThreads,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  async list(tenant: Tenant, projectId: string, path = '', recursive = false): Promise<WorkspaceListingDto> {
    const { path: root } = await this.resolver.resolve(tenant.tenantId, projectId);
    return this.audited(tenant, projectId, 'list_files', { path, recursive }, () =>
      asHttpError(() => {
        // The dashboard shows sizes and times. One directory is a walk one level deep: a big one in the pool.
        const options = { limit: LISTING_LIMIT, details: true as const, ...(recursive ? {} : { maxDepth: 1 }) };
        return listRecursively(this.pool, root, path, options, { key: tenant.tenantId });
      }),
    );
  }

  async read(tenant: Tenant, projectId: string, path: string, encoding: 'utf8' | 'base64' = 'utf8'): Promise<WorkspaceFileDto> {
    const { path: root } = await this.resolver.resolve(tenant.tenantId, projectId);
    const file = await this.audited(tenant, projectId, 'read_file', { path, encoding }, () =>
      asHttpError(() => this.reads.readFile(root, path, { maxBytes: this.config.workspace.fileMaxBytes, encoding })),
    );
    return { path: file.path, encoding: file.encoding, content: file.content, size: file.size, truncated: file.truncated };
  }

  // A person's read of the workspace leaves the same trace as an agent's: one audit row, channel `browse`,
  // named like the tool that reads the same way, with the reading key as its caller, whether it was answered or refused.
  private async audited<T>(
    tenant: Tenant,
    projectId: string,
    tool: string,
    args: Record<string, unknown>,
    read: () => Promise<T>,
  ): Promise<T> {
    const startedAt = new Date();
    const row = (status: 'ok' | 'error', error: { code: string; message: string } | null) => ({
      id: randomUUID(),
      tenantId: tenant.tenantId,
      projectId,
      tool,
      channel: 'browse' as const,
      callerKeyId: tenant.apiKeyId,
      callerName: tenant.keyName,
      status,
      event: null,
      errorCode: error?.code ?? null,
      errorMessage: error?.message ?? null,
      durationMs: Date.now() - startedAt.getTime(),
      arguments: args,
      redactedPaths: [],
      startedAt,
      finishedAt: new Date(),
    });
    try {
      const answer = await read();
      await this.audit.record(row('ok', null));
      return answer;
    } catch (error) {
      const known =
        error instanceof AppError ? { code: error.code, message: error.message } : { code: 'internal_error', message: 'The read failed' };
      await this.audit.record(row('error', known));
      throw error;
    }
  }
}

const FS_ERROR_STATUS: Record<WorkspaceFsError['code'], number> = {
  not_found: 404,
  parent_not_found: 404,
  not_a_directory: 400,
  is_directory: 400,
  binary_file: 422,
  file_too_large: 413,
  file_changed: 409,
  already_exists: 409,
  not_empty: 409,
  symlink_loop: 400,
  permission_denied: 403,
  no_space: 507,
  workspace_quota_exceeded: 507,
  read_only: 409,
  io_error: 500,
};

// Here a missing file is an HTTP 404; the tools report the same outcomes to the model instead.
async function asHttpError<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof WorkspaceFsError) throw workspaceFsRefusal(FS_ERROR_STATUS[error.code], error.code, error.message);
    throw error;
  }
}
