import { AppError, unprocessable } from '../common/errors/app-error.js';

// A file-system failure of the browsing routes, which answer it as an HTTP status of its own.
export const workspaceFsRefusal = (status: number, code: string, message: string) => new AppError(status, code, message);

export const workspaceUnavailable = (projectId: string) =>
  new AppError(
    409,
    'workspace_unavailable',
    `Project '${projectId}' has no workspace: set its workspacePath or configure WORKSPACE_ROOT (falling back to the working directory is disabled by WORKSPACE_FALLBACK=error)`,
  );

export const workspacePathRefused = (reason: string) => unprocessable('workspace_path_not_allowed', `workspacePath refused: ${reason}`);

// A tenant's key named a host directory without the operator having granted it roots to choose from.
export const workspacePathOperatorOnly = () =>
  new AppError(
    403,
    'workspace_path_operator_only',
    'A project\'s workspace directory is chosen by the operator: PATCH /v1/admin/projects/{projectId} with {"workspacePath"} and the ADMIN_TOKEN, or grant this tenant roots of its own with PATCH /v1/admin/tenants/{tenantId} {"workspaceRoots": [...]}. Without workspacePath the project keeps its own directory under WORKSPACE_ROOT.',
  );

export const workspaceRootsRefused = (reason: string) => unprocessable('workspace_roots_not_allowed', `workspaceRoots refused: ${reason}`);

// The project's directory is no longer where and what it was when accepted (gone, or a symlink now stands
// in its path): nothing runs there until the operator looks.
export const workspaceDirectoryUnavailable = (projectId: string) =>
  new AppError(
    409,
    'workspace_unavailable',
    `Project '${projectId}' cannot use its workspace: the directory is gone, or no longer the directory that was accepted (a symlink or another file stands in its path). Nothing ran. The operator can restore it or set another with PATCH /v1/admin/projects/{projectId}.`,
  );
