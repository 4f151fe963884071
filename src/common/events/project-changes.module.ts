import { Global, Module } from '@nestjs/common';
import { ProjectChanges } from './project-changes.js';

@Global()
@Module({ providers: [ProjectChanges], exports: [ProjectChanges] })
export class ProjectChangesModule {}
