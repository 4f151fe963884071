import { Injectable } from '@nestjs/common';
import { formatTool, type ToolFormat } from './tool-formats.js';
import { ToolRegistry } from './tool-registry.js';

@Injectable()
export class ToolsService {
  constructor(private readonly registry: ToolRegistry) {}

  async list(tenantId: string, projectId: string, format: ToolFormat = 'native') {
    const { tools } = await this.registry.forProject(tenantId, projectId);
    return { tools: tools.map((t) => formatTool(t.executor.definition, format)) };
  }

  async get(tenantId: string, projectId: string, toolName: string, format: ToolFormat = 'native') {
    return formatTool((await this.registry.find(tenantId, projectId, toolName)).executor.definition, format);
  }
}
