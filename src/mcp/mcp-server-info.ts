import {
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { LEGACY_TASKS_CAPABILITY } from './mcp-tasks.service.js';

// What the endpoint says of itself, the same on the direct answers and the SDK's Servers.
export const SERVER_INFO = { name: 'toolgate', version: '1' };

// Revisions are dates, so they compare as strings.
export const FIRST_REVISION_WITH_TASKS = '2025-11-25';

// Tasks are declared to the revision that defines them (2025-11-25), not to the older ones.
export const withLegacyTasks = (capabilities: ServerCapabilities, revision: string | undefined): ServerCapabilities =>
  revision !== undefined && revision >= FIRST_REVISION_WITH_TASKS ? { ...capabilities, tasks: LEGACY_TASKS_CAPABILITY } : capabilities;

// What the SDK's Server answers to initialize (Server._oninitialize): the client's revision when
// supported, else the latest, with the same capabilities and server info as the SDK's Servers.
export function initializeResult(requested: string, capabilities: ServerCapabilities): InitializeResult {
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  return { protocolVersion, capabilities: withLegacyTasks(capabilities, protocolVersion), serverInfo: SERVER_INFO };
}
