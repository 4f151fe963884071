import MiniSearch from 'minisearch';
import type { ToolDefinition } from '../execution/tool-definition.js';

interface SearchDocument {
  id: string;
  name: string;
  title: string;
  description: string;
  parameters: string;
}

// Words that say nothing about which tool is meant.
const STOP_WORDS = new Set(
  'a an and are as at be by for from has have i in into is it its me my of on or our that the their this to was we what with you your all any some can do does please want need'.split(
    ' ',
  ),
);

// Names are split where a model's words would be (`create_issue`, `listFiles`, `get-user`), so "create an
// issue" finds create_issue.
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((t) => t.length > 0);
}

// Lower case, stop words out, a light suffix strip so "files", "filed" and "filing" meet "file".
function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  if (t.length > 5 && t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.length > 5 && t.endsWith('ing')) return t.slice(0, -3);
  if (t.length > 4 && t.endsWith('ed')) return t.slice(0, -2);
  if (t.length > 4 && t.endsWith('es') && /(ss|x|ch|sh)es$/.test(t)) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss')) return t.slice(0, -1);
  return t;
}

// The text of a schema's parameters: their names and descriptions, nested ones included.
function parameterText(schema: unknown, depth = 0): string {
  if (typeof schema !== 'object' || schema === null || depth > 4) return '';
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  const parts: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    parts.push(name);
    const description = (property as { description?: unknown } | null)?.description;
    if (typeof description === 'string') parts.push(description);
    parts.push(parameterText(property, depth + 1));
    parts.push(parameterText((property as { items?: unknown } | null)?.items, depth + 1));
  }
  return parts.join(' ');
}

// What one tool contributes to the index, per field: a model's query is a few words, so the first
// kilobytes of a description say what the tool is for; a skill's 300 KB description would only make the
// index slow to build (on the event loop) and its vocabulary large, for every search of the toolset.
export const INDEXED_CHARS_PER_FIELD = 4096;
// Documents indexed between two turns of the event loop while an index builds.
const BUILD_CHUNK = 25;

// A full-text index (MiniSearch, BM25) over a toolset's tools: names weigh most, then titles, descriptions,
// then parameter names and descriptions. Built once per toolset view, in chunks that let other requests
// run in between; a query answers tool names, best first.
export class ToolSearchIndex {
  private constructor(private readonly index: MiniSearch<SearchDocument>) {}

  static async build(tools: readonly (ToolDefinition & { title?: string })[]): Promise<ToolSearchIndex> {
    const index = new MiniSearch<SearchDocument>({
      fields: ['name', 'title', 'description', 'parameters'],
      tokenize,
      processTerm,
      searchOptions: {
        boost: { name: 3, title: 2, description: 1.5, parameters: 0.5 },
        prefix: (term) => term.length > 3,
        fuzzy: (term) => (term.length > 5 ? 0.2 : false),
        combineWith: 'OR',
      },
    });
    const cap = (text: string) => text.slice(0, INDEXED_CHARS_PER_FIELD);
    const documents = tools.map((t) => ({
      id: t.name,
      name: t.name,
      title: cap(t.title ?? ''),
      description: cap(t.description),
      parameters: cap(parameterText(t.inputSchema)),
    }));
    await index.addAllAsync(documents, { chunkSize: BUILD_CHUNK });
    return new ToolSearchIndex(index);
  }

  search(query: string): string[] {
    return this.index.search(query).map((hit) => hit.id as string);
  }
}
