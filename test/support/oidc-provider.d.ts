// The part of oidc-provider (which ships no types) the tests use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export interface StoredAccessToken {
    accountId: string;
    scope?: string;
    // The resource (RFC 8707) it was issued for, with resource indicators.
    aud?: string | string[];
    destroy(): Promise<void>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    AccessToken: { find(value: string): Promise<StoredAccessToken | undefined> };
    Client: {
      find(
        id: string,
      ): Promise<{ clientId: string; redirectUris?: string[]; clientSecret?: string; tokenEndpointAuthMethod?: string } | undefined>;
    };
  }
  export const errors: { InvalidTarget: new (description?: string) => Error };
}
