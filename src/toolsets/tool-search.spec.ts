import type { ToolDefinition } from '../execution/tool-definition.js';
import { INDEXED_CHARS_PER_FIELD, ToolSearchIndex } from './tool-search.js';

const tool = (name: string, description: string, parameters: Record<string, string> = {}): ToolDefinition => ({
  name,
  description,
  inputSchema: {
    type: 'object',
    properties: Object.fromEntries(Object.entries(parameters).map(([p, d]) => [p, { type: 'string', description: d }])),
  },
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  timeoutMs: 1000,
  source: 'builtin',
});

describe('ToolSearchIndex', () => {
  it('finds tools by the words of their names, descriptions and parameters, best first', async () => {
    const index = await ToolSearchIndex.build([
      tool('create_issue', 'Open a new issue in a repository', { title: 'Title of the issue' }),
      tool('list_files', 'List the files of a directory'),
      tool('send_email', 'Send a message', { recipient: 'Who receives the email' }),
    ]);
    expect(index.search('create an issue')[0]).toBe('create_issue');
    expect(index.search('files in a folder directory')[0]).toBe('list_files');
    expect(index.search('recipient')).toEqual(['send_email']);
  });

  it('indexes the first INDEXED_CHARS_PER_FIELD characters of a field, so a huge description costs no more', async () => {
    const padding = 'lorem '.repeat(INDEXED_CHARS_PER_FIELD);
    const index = await ToolSearchIndex.build([tool('huge', `zebracorn ${padding} quokkafish`), tool('small', 'other words')]);
    expect(index.search('zebracorn')).toEqual(['huge']);
    expect(index.search('quokkafish')).toEqual([]);
  });

  it('lets the event loop turn while a large index builds', async () => {
    const tools = Array.from({ length: 200 }, (_, i) => tool(`tool_${i}`, `Tool number ${i} does a thing`));
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await ToolSearchIndex.build(tools);
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(0);
  });
});
