import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { isLogLevel, type LogLevel } from '../execution/tool-logs.js';
import type { KeyInProject } from './mcp-key-scope.js';

// Whose level it is: a key, in a project of its tenant.
export type LogLevelOwner = KeyInProject;

@Injectable()
export class McpLogLevelsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async find(owner: LogLevelOwner): Promise<LogLevel | null> {
    const row = await this.prisma.mcpLogLevel.findFirst({ where: owner, select: { level: true } });
    return row && isLogLevel(row.level) ? row.level : null;
  }

  async set(owner: LogLevelOwner, level: LogLevel): Promise<void> {
    const updatedAt = new Date();
    await this.prisma.mcpLogLevel.upsert({
      where: { projectId_apiKeyId: { projectId: owner.projectId, apiKeyId: owner.apiKeyId } },
      create: { ...owner, level, updatedAt },
      // The project id is the tenant's (the endpoint checked it first): one row per key and project.
      update: { level, updatedAt },
    });
  }

  async clear(owner: LogLevelOwner): Promise<void> {
    await this.prisma.mcpLogLevel.deleteMany({ where: owner });
  }
}
