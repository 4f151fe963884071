// A tool that acts with a person's account at a provider, and that person has no usable connection there
// (none yet, expired, revoked, or without a scope the tool needs): the tool does not run. The call answers
// `status: "authorization_required"` with the link the person opens to connect, then the caller calls again.
export interface AuthorizationLink {
  provider: string;
  url: string;
  scopes: string[];
  expiresAt: string;
}

export class AuthorizationRequired extends Error {
  constructor(
    readonly authorization: AuthorizationLink,
    // Why, without the link: what the audit row keeps (the link connects whoever opens it).
    readonly reason: string,
  ) {
    super(
      `Ask the user to open ${authorization.url} to connect ${authorization.provider}, then call again. The link works once, until ${authorization.expiresAt}.`,
    );
    this.name = 'AuthorizationRequired';
  }
}
