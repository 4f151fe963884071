import { AppError, conflict, notFound } from '../common/errors/app-error.js';

export const skillNotFound = (skillId: string) => notFound('skill_not_found', `No skill with id '${skillId}'`);
export const skillNameTaken = (name: string) =>
  conflict('skill_name_taken', `A skill named '${name}' already exists; PUT a new version instead`);
export const skillVersionExists = (version: string) =>
  conflict('skill_version_exists', `The skill is already at version '${version}'; a PUT must bring a new version`);
export const skillNotEnabled = (skillId: string) => notFound('skill_not_enabled', `Skill '${skillId}' is not enabled on this project`);
export const skillAlreadyEnabled = (skillId: string) =>
  conflict('skill_already_enabled', `Skill '${skillId}' is already enabled on this project`);

export interface ToolCollision {
  tool: string;
  // 'builtin', 'skill:<name>@<version>', or 'toolset:<slug>' (a toolset that shows another tool under the name)
  conflictsWith: string;
  // With a toolset: the tool it shows under the name.
  renamed?: string;
}

const TOOLSET = 'toolset:';

function holder(c: ToolCollision): string {
  if (c.conflictsWith === 'builtin') return 'provided by the built-in tools';
  if (c.conflictsWith.startsWith(TOOLSET))
    return `the name toolset '${c.conflictsWith.slice(TOOLSET.length)}' shows ${c.renamed ?? 'a tool'} under`;
  return `provided by ${c.conflictsWith}`;
}

export const toolNameCollision = (collisions: ToolCollision[]) =>
  conflict(
    'tool_name_collision',
    `Tool names must be unique in a project: ${collisions.map((c) => `'${c.tool}' is already ${holder(c)}`).join('; ')}`,
    { collisions },
  );

export const schemaRefused = (tool: string, schema: 'inputSchema' | 'outputSchema' | 'executor', location: string, reason: string) =>
  new AppError(422, 'schema_refused', `Tool '${tool}': ${schema}${location} refused: ${reason}`, {
    details: { tool, schema, location: location || '/', reason },
  });

export const invalidSkill = (message: string, issues?: unknown[]) =>
  new AppError(422, 'invalid_skill', `Invalid skill: ${message}`, issues ? { extra: { issues } } : {});

export const mcpImportRefused = (message: string, details?: Record<string, unknown>) =>
  new AppError(422, 'mcp_import_refused', message, { details });

export const argumentLooksLikeOption = (name: string) =>
  new AppError(
    422,
    'argument_looks_like_option',
    `The value of '${name}' would start an argument with '-' where the command expects a value, not an option; remove the leading '-'`,
    { details: { parameter: name } },
  );

export const notPlaceableInCommand = (name: string) =>
  new AppError(422, 'invalid_arguments', `'${name}' must be a string, number or boolean to be placed in the command`);

export const skillTooLarge = (bytes: number, limit: number) =>
  new AppError(
    413,
    'skill_too_large',
    `The skill's tools are ${bytes} bytes as stored; the limit is ${limit}. Split it into several skills, or shorten its descriptions and schemas.`,
    {
      details: { bytes, limit },
    },
  );

export const skillRegistrationBusy = (waiting: number) =>
  new AppError(
    429,
    'skill_registrations_busy',
    `This tenant already has a skill registration being checked and ${waiting} waiting; send this one again once they are done.`,
    {
      headers: { 'Retry-After': '2' },
    },
  );
