import { Module } from '@nestjs/common';
import { TracingLifecycle } from './tracing.lifecycle.js';

@Module({ providers: [TracingLifecycle] })
export class TracingModule {}
