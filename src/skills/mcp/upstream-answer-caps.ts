import { jsonTextNestsDeeperThan } from '../../common/json/json-text-depth.js';

// An upstream MCP server's answer, cut down to what Toolgate relays before the SDK client parses it: a
// tools/call result keeps at most `maxContentItems` content items, the last of them a note saying how many
// were dropped.
// Pure and synchronous: large answers run it on a pool thread (see guardedMcpFetch), where parsing a few
// megabytes of small items cannot stall every other tenant's requests.

export interface UpstreamAnswer {
  body: string;
  contentType: string;
}

export interface CapRequest extends UpstreamAnswer {
  maxContentItems: number;
}

// Whether any JSON-RPC message of the answer nests deeper than `maxDepth`, read from its text before it is
// parsed (jsonTextNestsDeeperThan): each event of an event stream on its own, as each is parsed.
export function upstreamAnswerNestsDeeperThan({ body, contentType }: UpstreamAnswer, maxDepth: number): boolean {
  if (/^\s*text\/event-stream/i.test(contentType))
    return body.split(/\r?\n\r?\n/).some((event) => jsonTextNestsDeeperThan(eventData(event), maxDepth));
  return /json/i.test(contentType) && jsonTextNestsDeeperThan(body, maxDepth);
}

const eventData = (event: string): string =>
  event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5))
    .join('\n');

// The rewritten body, or null when nothing needed cutting (the original bytes are then relayed as they came).
export function capUpstreamAnswer({ body, contentType, maxContentItems }: CapRequest): string | null {
  if (/^\s*text\/event-stream/i.test(contentType)) return capEventStream(body, maxContentItems);
  if (/json/i.test(contentType)) return capJsonText(body, maxContentItems);
  return null;
}

function capJsonText(text: string, max: number): string | null {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    // Not ours to judge: the SDK refuses a malformed answer with its own error.
    return null;
  }
  return capMessages(message, max) ? JSON.stringify(message) : null;
}

// Server-sent events: each event's data lines carry one JSON-RPC message. Only events that needed cutting
// are written again; the others keep their bytes.
function capEventStream(text: string, max: number): string | null {
  const events = text.split(/\r?\n\r?\n/);
  let changed = false;
  const out = events.map((event) => {
    const lines = event.split(/\r?\n/);
    const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length === 0) return event;
    const capped = capJsonText(data.join('\n'), max);
    if (capped === null) return event;
    changed = true;
    return [...lines.filter((line) => !line.startsWith('data:')), `data: ${capped}`].join('\n');
  });
  return changed ? out.join('\n\n') : null;
}

// A JSON-RPC message or a batch of them; true when a result's content was cut.
function capMessages(message: unknown, max: number): boolean {
  if (Array.isArray(message)) return message.map((item) => capMessages(item, max)).some(Boolean);
  if (typeof message !== 'object' || message === null) return false;
  return capResultContent((message as { result?: unknown }).result, max);
}

// A tools/call result's content, cut in place; true when it was. Also applied to every answer the SDK
// returns, so a small answer with many tiny items is held to the same count.
export function capResultContent(result: unknown, max: number): boolean {
  if (typeof result !== 'object' || result === null) return false;
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content) || content.length <= max) return false;
  const kept = max - 1;
  const dropped = content.length - kept;
  content.length = kept;
  content.push({ type: 'text', text: droppedItemsNote(dropped, max) });
  return true;
}

export const droppedItemsNote = (dropped: number, max: number): string =>
  `[${dropped} more content items were dropped: Toolgate relays at most ${max} per result (MCP_RESULT_MAX_CONTENT_ITEMS)]`;
