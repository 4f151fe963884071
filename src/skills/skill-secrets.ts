import type { SecretBox } from '../common/secrets/secret-box.js';
import { isSensitiveName, maskUrl, urlSecrets } from '../common/secrets/secret-redaction.js';

// The parts of a skill that are secrets: its signing key, and the URL and header values of its http and mcp
// executors (an MCP source's `?api_key=` is as much a credential as its Authorization header). They are
// sealed on the way into the database and opened on the way out (see SkillsRepository); the API shows
// header names with masked values and URLs with the values of credential-like query parameters masked
// (maskExecutorSecrets), and the signing key only once, at registration.

type ToolJson = { executor?: { type?: string; url?: string; headers?: Record<string, string> } } & Record<string, unknown>;

export const MASKED_HEADER_VALUE = '[stored encrypted]';

function mapSecrets<T>(tools: readonly T[], mapHeader: (value: string) => string, mapUrl: (url: string) => string): T[] {
  return (tools as readonly ToolJson[]).map((tool) => {
    const executor = tool.executor;
    if (!executor || (executor.type !== 'http' && executor.type !== 'mcp')) return tool;
    const headers =
      executor.headers && Object.fromEntries(Object.entries(executor.headers).map(([name, value]) => [name, mapHeader(value)]));
    return {
      ...tool,
      executor: { ...executor, ...(executor.url !== undefined && { url: mapUrl(executor.url) }), ...(headers && { headers }) },
    };
  }) as T[];
}

export const sealExecutorSecrets = <T>(tools: readonly T[], box: SecretBox): T[] =>
  mapSecrets(
    tools,
    (value) => box.seal(value),
    (url) => box.seal(url),
  );
// Rows stored before sealing existed hold plain values until the start-up pass re-seals them.
export const openExecutorSecrets = <T>(tools: readonly T[], box: SecretBox): T[] =>
  mapSecrets(
    tools,
    (value) => box.openOrPlain(value),
    (url) => box.openOrPlain(url),
  );
export const maskExecutorSecrets = <T>(tools: readonly T[]): T[] =>
  mapSecrets(
    tools,
    () => MASKED_HEADER_VALUE,
    (url) => maskUrl(url, MASKED_HEADER_VALUE),
  );

// What an executor holds that a message must never quote: the values of its credential headers (by name,
// or shaped like a token: 16 or more characters mixing letters and digits, no spaces) with the token of an
// `Authorization: Bearer …` alone too, and the values of its URL's credential-like query parameters. Looked
// for whole (scrubWholeValues): an upstream echoes what it was sent, and `Accept: application/json` or a
// token sharing its first letters with a word must not blank that word.
export function executorSecrets(executor: { url?: unknown; headers?: unknown }): string[] {
  const secrets = typeof executor.url === 'string' ? urlSecrets(executor.url) : [];
  if (typeof executor.headers === 'object' && executor.headers !== null) {
    for (const [name, value] of Object.entries(executor.headers)) {
      if (typeof value !== 'string' || !(isSensitiveName(name) || TOKEN_SHAPED.test(value))) continue;
      secrets.push(value);
      const token = value.trim().split(/\s+/).at(-1);
      if (token && token !== value) secrets.push(token);
    }
  }
  return secrets;
}

const TOKEN_SHAPED = /^(?=\S*[0-9])(?=\S*[A-Za-z])\S{16,}$/;

// An MCP source kept for re-reading (url, headers?, tools?, trustAnnotations?): its URL and header values are
// secrets exactly like an mcp executor's.
type SourceJson = { url?: string; headers?: Record<string, string> } & Record<string, unknown>;
const mapSource = <T>(source: T, map: (tools: readonly ToolJson[]) => ToolJson[]): T => {
  const { executor } = map([{ executor: { ...(source as SourceJson), type: 'mcp' } }])[0];
  const { type: _type, ...rest } = executor as SourceJson;
  return { ...(source as SourceJson), ...rest } as T;
};
export const sealSourceSecrets = <T>(source: T, box: SecretBox): T => mapSource(source, (tools) => sealExecutorSecrets(tools, box));
export const openSourceSecrets = <T>(source: T, box: SecretBox): T => mapSource(source, (tools) => openExecutorSecrets(tools, box));
export const maskSourceSecrets = <T>(source: T): T => mapSource(source, (tools) => maskExecutorSecrets(tools));
