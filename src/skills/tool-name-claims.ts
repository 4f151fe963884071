import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction.js';

// A name of a project's tools held by something above skills: a toolset that shows one tool under another
// name holds that name (the model calls it by it), so no skill's tool may come to take it.
export interface ToolNameClaim {
  name: string;
  // 'toolset:<slug>'
  heldBy: string;
  // The real tool shown under the name.
  tool: string;
}

// Reads the claims on a project's names inside the transaction that holds the project's lock.
export type ToolNameClaimer = (tx: Tx, tenantId: string, projectId: string) => Promise<ToolNameClaim[]>;

// The claimers, handed up by the features that make claims (toolsets), so that skills, which must respect
// them when a tool joins a project, need not know those features.
@Injectable()
export class ToolNameClaims {
  private readonly claimers: ToolNameClaimer[] = [];

  register(claimer: ToolNameClaimer): void {
    this.claimers.push(claimer);
  }

  async on(tx: Tx, tenantId: string, projectId: string): Promise<ToolNameClaim[]> {
    const claims: ToolNameClaim[] = [];
    for (const claimer of this.claimers) claims.push(...(await claimer(tx, tenantId, projectId)));
    return claims;
  }
}
