import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import { isLogLevel, type LogLevel } from '../execution/tool-logs.js';

// Whose level it is: a key, in a project of its tenant. Every read and write is scoped by all three.
export interface LogLevelOwner {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
}

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
