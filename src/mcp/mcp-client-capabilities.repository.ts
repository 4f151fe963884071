import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import type { KeyInProject } from './mcp-key-scope.js';

@Injectable()
export class McpClientCapabilitiesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async urlElicitation(owner: KeyInProject): Promise<boolean> {
    const row = await this.prisma.mcpClientCapability.findFirst({ where: owner, select: { urlElicitation: true } });
    return row?.urlElicitation === true;
  }

  async set(owner: KeyInProject, urlElicitation: boolean): Promise<void> {
    const updatedAt = new Date();
    await this.prisma.mcpClientCapability.upsert({
      where: { projectId_apiKeyId: { projectId: owner.projectId, apiKeyId: owner.apiKeyId } },
      create: { ...owner, urlElicitation, updatedAt },
      // The project id is the tenant's (the endpoint checked it first): one row per key and project.
      update: { urlElicitation, updatedAt },
    });
  }
}
