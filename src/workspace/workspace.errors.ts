import { AppError, unprocessable } from '../common/errors/app-error.js';


// A file-system failure of the browsing routes, which answer it as an HTTP status of its own.
export const workspaceFsRefusal = (status: number, code: string, message: string) => new AppError(status, code, message);

export const workspaceUnavailable = (projectId: string) =>
  new AppError(
    409,
    'workspace_unavailable',
    `Project '${projectId}' has no workspace: set its workspacePath or configure WORKSPACE_ROOT (falling back to the working directory is disabled by WORKSPACE_FALLBACK=error)`,
  );

export const workspacePathRefused = (reason: string) =>
  unprocessable('workspace_path_not_allowed', `workspacePath refused: ${reason}`);
