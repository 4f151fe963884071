import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

// The MCP SDK's server side, loaded by McpEndpointService only when a message needs it.
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

export const SHARED_VALIDATOR = new AjvJsonSchemaValidator();
