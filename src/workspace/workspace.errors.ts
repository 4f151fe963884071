import { AppError, notFound, unprocessable } from '../common/errors/app-error.js';

// The same bytes whether the project is missing or another tenant's.
export const projectNotFound = (projectId: string) => notFound('project_not_found', `No project with id '${projectId}'`);

export const workspaceUnavailable = (projectId: string) =>
  new AppError(
    409,
    'workspace_unavailable',
    `Project '${projectId}' has no workspace: set its workspacePath or configure WORKSPACE_ROOT (falling back to the working directory is disabled by WORKSPACE_FALLBACK=error)`,
  );

export const workspacePathRefused = (reason: string) =>
  unprocessable('workspace_path_not_allowed', `workspacePath refused: ${reason}`);
