import { Global, Module } from '@nestjs/common';
import { FairTurns } from './fair-turns.js';
import { LoopShare } from './loop-share.js';

// One FairTurns and one LoopShare for the whole service: the turns are fair only if every heavy step (a
// batch's results, an export's pages) waits in the same line, and the share only if every call starts
// through it.
@Global()
@Module({
  providers: [FairTurns, LoopShare],
  exports: [FairTurns, LoopShare],
})
export class SchedulingModule {}
