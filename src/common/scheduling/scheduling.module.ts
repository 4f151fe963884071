import { Global, Module } from '@nestjs/common';
import { FairTurns } from './fair-turns.js';

// One FairTurns for the whole service: the turns are fair only if every heavy step (a batch's results, an
// export's pages) waits in the same line.
@Global()
@Module({
  providers: [FairTurns],
  exports: [FairTurns],
})
export class SchedulingModule {}
