// Shared pieces of the file tools' input schemas.
export const PATH_PROPERTY = {
  type: 'string',
  minLength: 1,
  maxLength: 8192,
  description: 'Path relative to the project workspace (an absolute path must lie inside it)',
} as const;
