import { AppError } from '../common/errors/app-error.js';

export const mcpMethodNotAllowed = () =>
  new AppError(
    405,
    'method_not_allowed',
    'This MCP endpoint is stateless: POST JSON-RPC messages to it; there is no stream to GET and no session to DELETE',
    { headers: { Allow: 'POST' } },
  );

export const hostNotAllowed = (host: string) =>
  new AppError(
    403,
    'host_not_allowed',
    `The Host '${host}' is not one of this service's names, so the MCP endpoint refuses the request (a defence against DNS rebinding); call the service by one of its names, or ask the operator to add this one to ALLOWED_HOSTS`,
  );

export const originNotAllowed = (origin: string) =>
  new AppError(
    403,
    'origin_not_allowed',
    `The MCP endpoint refuses requests from the browser origin '${origin}': only the service's own origin may call it from a browser; the operator allows others with MCP_ALLOWED_ORIGINS`,
  );
