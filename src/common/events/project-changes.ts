import { Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../bus/change-bus.js';

type Listener = (tenantId: string, projectId: string) => void;

interface ProjectChanged {
  tenantId: string;
  projectId: string;
}

const PROJECT_CHANGED = busTopic<ProjectChanged>('project.changed');

// Tells the caches keyed by project (workspace, tool settings, enabled skill tools) that a project was
// updated or deleted, on every instance, without the projects module having to know each of them.
@Injectable()
export class ProjectChanges {
  private readonly listeners: Listener[] = [];

  constructor(private readonly bus: ChangeBus) {
    bus.subscribe(PROJECT_CHANGED, ({ tenantId, projectId }) => {
      for (const listener of this.listeners) listener(tenantId, projectId);
    });
  }

  subscribe(listener: Listener): void {
    this.listeners.push(listener);
  }

  changed(tenantId: string, projectId: string): void {
    this.bus.publish(PROJECT_CHANGED, { tenantId, projectId });
  }
}
