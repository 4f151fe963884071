// Whose the state a stateless endpoint keeps between POSTs is (a task, a log level): an API key (or an
// OAuth token's principal), in one project of its tenant. Every read and write of such state is scoped by
// all three, so another key, project or tenant finds nothing.
export interface KeyInProject {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
}
