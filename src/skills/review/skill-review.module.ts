import { Module } from '@nestjs/common';
import { SkillsModule } from '../skills.module.js';
import { ToolsModule } from '../../tools/tools.module.js';
import { McpSourceRefresher } from './mcp-source-refresher.js';
import { SkillReviewController } from './skill-review.controller.js';
import { SkillReviewService } from './skill-review.service.js';

// Above both skills and tools: a review decides on skills' tools and sends tool.definition_changed.
@Module({
  imports: [SkillsModule, ToolsModule],
  controllers: [SkillReviewController],
  providers: [SkillReviewService, McpSourceRefresher],
})
export class SkillReviewModule {}
