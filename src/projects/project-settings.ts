// What a call inside a project needs to know about it: where its workspace is, what its commands may run,
// which tools wait for approval. ProjectsRepository reads it from the row, ProjectAccess caches it.
export interface ProjectSettings {
  workspacePath: string | null;
  shellEnabled: boolean;
  shellAllowlist: string[];
  approvalRequired: string[];
}
