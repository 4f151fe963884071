import { Global, Module } from '@nestjs/common';
import { CommandSandbox } from './command-sandbox.js';
import { SandboxUids } from './sandbox-uids.js';
import { SandboxUidsRepository } from './sandbox-uids.repository.js';

// Global: the shell tool, command skills and the health route all ask the one CommandSandbox; workspaces
// ask SandboxUids whom a tenant's directories belong to.
@Global()
@Module({ providers: [CommandSandbox, SandboxUids, SandboxUidsRepository], exports: [CommandSandbox, SandboxUids] })
export class SandboxModule {}
