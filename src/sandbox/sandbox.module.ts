import { Global, Module } from '@nestjs/common';
import { CommandSandbox } from './command-sandbox.js';

// Global: the shell tool, command skills and the health route all ask the one CommandSandbox.
@Global()
@Module({ providers: [CommandSandbox], exports: [CommandSandbox] })
export class SandboxModule {}
