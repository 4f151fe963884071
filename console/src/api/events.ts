import { api } from './client';

export interface ToolEventMessage {
  type: string;
  id?: string;
  data: {
    invocationId?: string;
    tool?: string;
    status?: string;
    channel?: string;
    caller?: { keyId: string; name: string | null } | null;
    error?: { code: string; message: string };
    durationMs?: number;
    at?: string;
  };
}

// EventSource cannot send an Authorization header, and the events route authenticates like every tenant
// route; so the stream is read with fetch (through the typed client) and parsed here.
export async function tailEvents(projectId: string, signal: AbortSignal, onEvent: (event: ToolEventMessage) => void): Promise<void> {
  const { response } = await api.GET('/v1/projects/{projectId}/events', {
    params: { path: { projectId } },
    headers: { Accept: 'text/event-stream' },
    parseAs: 'stream',
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`The live tail could not start (HTTP ${response.status})`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) onEvent(event);
    }
  }
}

function parseBlock(block: string): ToolEventMessage | undefined {
  let type = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length === 0) return undefined;
  try {
    return { type, id, data: JSON.parse(data.join('\n')) as ToolEventMessage['data'] };
  } catch {
    return undefined;
  }
}
