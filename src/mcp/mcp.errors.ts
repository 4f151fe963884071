import { AppError } from '../common/errors/app-error.js';

export const mcpMethodNotAllowed = () =>
  new AppError(
    405,
    'method_not_allowed',
    'This MCP endpoint is stateless: POST JSON-RPC messages to it; there is no stream to GET and no session to DELETE',
    { headers: { Allow: 'POST' } },
  );
