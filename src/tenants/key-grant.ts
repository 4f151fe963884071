import type { KeyRole } from '../common/auth/key-roles.js';

// What a key may do, fixed when it is issued and stored on its row.
export interface KeyGrant {
  role: KeyRole;
  projectIds: string[];
  tools: string[];
  expiresAt: Date | null;
  // An agent key bound to one toolset of its one project (slug); null: none.
  toolset: string | null;
  // An OAuth access token: the consent (oauth_grants row) it was issued under and the one resource it serves.
  oauthGrantId?: string;
  oauthResource?: string;
  // Every call of the key parks for approval (an OAuth client an approver signed in).
  parksEveryCall?: boolean;
  // Its calls may name their end user (Toolgate-User).
  actAsUsers?: boolean;
}
