import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ServiceHostNames, shownHeader } from '../common/http/service-host-names.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { oauthHostNotAllowed } from './oauth.errors.js';

// Without PUBLIC_URL the issuer, endpoints and resource URLs are built from the request's Host. A Host that is
// not one of the service's names (ALLOWED_HOSTS, as on the MCP endpoint) is refused, so no metadata document,
// redirect or token is ever issued under a name an attacker sent. With PUBLIC_URL the Host plays no part.
@Injectable()
export class OAuthHostGuard implements CanActivate {
  private readonly names: ServiceHostNames | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.names = config.oauth.publicUrl === null ? new ServiceHostNames(config) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.names === null) return true;
    const headers = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers;
    if (this.names.ownHost(headers.host) === null) throw oauthHostNotAllowed(shownHeader(headers.host));
    return true;
  }
}
