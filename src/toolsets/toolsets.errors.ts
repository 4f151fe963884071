import { AppError } from '../common/errors/app-error.js';

// The refusals of the toolsets feature.
export const toolsetNotFound = (slug: string) =>
  new AppError(
    404,
    'toolset_not_found',
    `No toolset '${slug.slice(0, 64)}' in this project; GET /v1/projects/{projectId}/toolsets lists them`,
  );

export const toolsetSlugTaken = (slug: string) =>
  new AppError(409, 'toolset_slug_taken', `The project already has a toolset '${slug}'; choose another slug or PUT that one`);

export const tooManyToolsets = (limit: number) =>
  new AppError(
    403,
    'too_many_toolsets',
    `A project has at most ${limit} toolsets; delete one (DELETE /v1/projects/{projectId}/toolsets/{slug}) or replace one with PUT`,
    { details: { limit } },
  );

export const toolsetTooLarge = (bytes: number, limit: number) =>
  new AppError(
    413,
    'toolset_too_large',
    `The toolset's entries are ${bytes} bytes as stored; the limit is ${limit}. Shorten its descriptions or fixed arguments, or split it into several toolsets.`,
    { details: { bytes, limit } },
  );

export const invalidToolset = (message: string, details?: Record<string, unknown>) =>
  new AppError(422, 'invalid_toolset', message, { details });

export interface ExposedNameCollision {
  tool: string;
  conflictsWith: string;
}

// The same code as a skill whose tool takes a name already in use (skills.errors.ts).
export const exposedNameCollision = (collisions: ExposedNameCollision[]) =>
  new AppError(
    409,
    'tool_name_collision',
    `Tool names must be unique among what a project offers: ${collisions.map((c) => `'${c.tool}' is already ${c.conflictsWith}`).join('; ')}`,
    { details: { collisions } },
  );

export const toolsetKeyRoute = () =>
  new AppError(
    403,
    'forbidden_for_toolset_key',
    'This key is bound to one toolset: it may only use /v1/projects/{projectId}/toolsets/{slug}/tools and …/mcp of that toolset',
  );
