import { Module } from '@nestjs/common';
import { AuthProvidersController } from './auth-providers.controller.js';
import { AuthProvidersRepository } from './auth-providers.repository.js';
import { AuthProvidersService } from './auth-providers.service.js';
import { ConnectionCallbackController } from './connection-callback.controller.js';
import { ConnectionTokens } from './connection-tokens.js';
import { ConnectionsController } from './connections.controller.js';
import { ConnectionsRepository } from './connections.repository.js';
import { ConnectionsService } from './connections.service.js';

@Module({
  controllers: [AuthProvidersController, ConnectionsController, ConnectionCallbackController],
  providers: [AuthProvidersRepository, AuthProvidersService, ConnectionsRepository, ConnectionsService, ConnectionTokens],
  exports: [ConnectionTokens],
})
export class ConnectionsModule {}
