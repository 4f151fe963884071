import { Module } from '@nestjs/common';
import { AuthProvidersController } from './auth-providers.controller.js';
import { AuthProvidersRepository } from './auth-providers.repository.js';
import { AuthProvidersService } from './auth-providers.service.js';
import { ClientMetadataController } from './client-metadata.controller.js';
import { ConnectionCallbackController } from './connection-callback.controller.js';
import { ConnectionTokens } from './connection-tokens.js';
import { ConnectionsController } from './connections.controller.js';
import { ConnectionsRepository } from './connections.repository.js';
import { ConnectionsService } from './connections.service.js';
import { ConnectionsSweeper } from './connections.sweeper.js';
import { McpAuthDiscovery } from './mcp-auth-discovery.js';

@Module({
  controllers: [AuthProvidersController, ConnectionsController, ConnectionCallbackController, ClientMetadataController],
  providers: [
    AuthProvidersRepository,
    AuthProvidersService,
    ConnectionsRepository,
    ConnectionsService,
    ConnectionsSweeper,
    ConnectionTokens,
    McpAuthDiscovery,
  ],
  exports: [ConnectionTokens, McpAuthDiscovery],
})
export class ConnectionsModule {}
