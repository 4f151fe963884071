// Shared pieces of the file tools' input schemas.
export const PATH_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 8192,
  description: 'Path relative to the project workspace (an absolute path must lie inside it)',
} as const;

export const GLOB_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  description: "Glob of the paths to keep, e.g. '**/*.ts'",
} as const;
