// An answer the SDK's schemas refused (a ZodError, whose message is the whole tree of issues as JSON): its
// first issue, in a line a model can read.
export function schemaIssue(error: unknown): string | null {
  if (!(error instanceof Error) || error.name !== 'ZodError') return null;
  const [issue] = (error as Error & { issues?: Array<{ path?: unknown[]; message?: string }> }).issues ?? [];
  if (!issue) return null;
  const at = Array.isArray(issue.path) && issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : '';
  return `its answer is not a valid MCP message${at}: ${String(issue.message)}`;
}
