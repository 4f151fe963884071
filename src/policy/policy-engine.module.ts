import { Module } from '@nestjs/common';
import { PoliciesRepository } from './policies.repository.js';
import { PolicyDecider } from './policy-decider.js';

// The decision itself, below the tools (which ask it before every call); PolicyModule's routes sit above.
@Module({
  providers: [PoliciesRepository, PolicyDecider],
  exports: [PoliciesRepository, PolicyDecider],
})
export class PolicyEngineModule {}
