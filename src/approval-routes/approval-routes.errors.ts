import { conflict, notFound, unprocessable } from '../common/errors/app-error.js';

export const approvalRouteNotFound = (routeId: string) =>
  notFound('approval_route_not_found', `No approval route with id '${routeId}' in this project`);

export const approvalRouteLimit = (max: number) =>
  conflict('approval_route_limit', `This project already has ${max} approval routes, the most it may have; delete one first`, { max });

// The URL as given, refused by the rules every send is judged by (FETCH_ALLOW_HOSTS opens hosts for both).
export const approvalRouteUrlRefused = (reason: string, url: string) =>
  unprocessable('approval_route_url_refused', `The approval route's URL was refused: ${reason}`, { url, reason });

export const approvalRouteSecretRefused = () =>
  unprocessable(
    'approval_route_secret_refused',
    "A Slack route takes no secret (Slack's incoming webhook URL is its credential); a webhook secret is whsec_ followed by base64 of 24 to 64 bytes",
  );
