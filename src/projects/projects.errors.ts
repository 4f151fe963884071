import { conflict, notFound } from '../common/errors/app-error.js';

// The same bytes whether the project is missing or another tenant's.
export const projectNotFound = (projectId: string) => notFound('project_not_found', `No project with id '${projectId}'`);

export const projectSlugTaken = (slug: string) =>
  conflict('project_slug_taken', `A project with slug '${slug}' already exists in this tenant`);
