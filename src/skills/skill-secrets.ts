import type { SecretBox } from '../common/secrets/secret-box.js';

// The parts of a skill that are secrets: its signing key and the header values of its http executors.
// They are sealed on the way into the database and opened on the way out (see SkillsRepository); the
// API shows header names with masked values (maskHeaders), and the signing key only once, at registration.

type ToolJson = { executor?: { type?: string; headers?: Record<string, string> } } & Record<string, unknown>;

export const MASKED_HEADER_VALUE = '[stored encrypted]';

function mapHeaders<T>(tools: readonly T[], map: (value: string) => string): T[] {
  return (tools as readonly ToolJson[]).map((tool) => {
    const headers = tool.executor?.headers;
    if (!headers) return tool;
    const mapped = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, map(value)]));
    return { ...tool, executor: { ...tool.executor, headers: mapped } };
  }) as T[];
}

export const sealHeaders = <T>(tools: readonly T[], box: SecretBox): T[] => mapHeaders(tools, (value) => box.seal(value));
// Rows stored before sealing existed hold plain values until the start-up pass re-seals them.
export const openHeaders = <T>(tools: readonly T[], box: SecretBox): T[] => mapHeaders(tools, (value) => box.openOrPlain(value));
export const maskHeaders = <T>(tools: readonly T[]): T[] => mapHeaders(tools, () => MASKED_HEADER_VALUE);
