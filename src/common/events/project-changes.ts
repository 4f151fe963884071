import { Injectable } from '@nestjs/common';

type Listener = (tenantId: string, projectId: string) => void;

// Tells the caches keyed by project (workspace, tool settings) that a project was updated or deleted,
// without the projects module having to know each of them.
@Injectable()
export class ProjectChanges {
  private readonly listeners: Listener[] = [];

  subscribe(listener: Listener): void {
    this.listeners.push(listener);
  }

  changed(tenantId: string, projectId: string): void {
    for (const listener of this.listeners) listener(tenantId, projectId);
  }
}
