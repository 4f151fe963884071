import { AppError, conflict, notFound } from '../../common/errors/app-error.js';

export const changeNotFound = (changeId: string) => notFound('change_not_found', `No change with id '${changeId}' for this skill`);
export const changeAlreadyDecided = (changeId: string, status: string) =>
  conflict('change_already_decided', `Change '${changeId}' is already ${status}; only a pending change can be accepted or rejected`);
export const notAnMcpSkill = (skillId: string) =>
  conflict(
    'not_an_mcp_skill',
    `Skill '${skillId}' has no MCP source to read again (its tools are its own, or it was registered before sources were kept: PUT it again with its source)`,
  );
export const tooManyTools = (count: number, limit: number) =>
  conflict(
    'skill_too_many_tools',
    `Accepting this change would give the skill ${count} tools; a skill has at most ${limit}. Reject changes that add tools you do not need, or split the source into several skills (source.tools names the tools each imports).`,
    { count, limit },
  );
export const sourceUnavailable = (reason: string) =>
  new AppError(502, 'mcp_source_unavailable', `Could not list the tools of the MCP server: ${reason}`, { details: { retryable: true } });
