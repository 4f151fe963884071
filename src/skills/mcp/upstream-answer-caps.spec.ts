import { capUpstreamAnswer, droppedItemsNote } from './upstream-answer-caps.js';

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'text', text: String(i) }));
const response = (n: number, id = 1) => ({ jsonrpc: '2.0', id, result: { content: items(n) } });

describe('capUpstreamAnswer', () => {
  it('cuts a JSON answer to the limit and says how many items were dropped', () => {
    const body = capUpstreamAnswer({ body: JSON.stringify(response(10)), contentType: 'application/json', maxContentItems: 4 });
    const message = JSON.parse(body!) as ReturnType<typeof response>;
    expect(message.result.content).toEqual([...items(3), { type: 'text', text: droppedItemsNote(7, 4) }]);
    expect(message.id).toBe(1);
  });

  it('leaves an answer within the limit, a non-JSON body and a malformed one alone', () => {
    expect(capUpstreamAnswer({ body: JSON.stringify(response(4)), contentType: 'application/json', maxContentItems: 4 })).toBeNull();
    expect(capUpstreamAnswer({ body: 'x'.repeat(10), contentType: 'text/plain', maxContentItems: 1 })).toBeNull();
    expect(capUpstreamAnswer({ body: '{"result":', contentType: 'application/json', maxContentItems: 1 })).toBeNull();
  });

  it('cuts each message of a JSON-RPC batch', () => {
    const body = capUpstreamAnswer({
      body: JSON.stringify([response(3, 1), response(1, 2)]),
      contentType: 'application/json; charset=utf-8',
      maxContentItems: 2,
    });
    const [first, second] = JSON.parse(body!) as ReturnType<typeof response>[];
    expect(first.result.content).toEqual([...items(1), { type: 'text', text: droppedItemsNote(2, 2) }]);
    expect(second.result.content).toEqual(items(1));
  });

  it('rewrites only the server-sent events that needed cutting, keeping their other fields', () => {
    const progress = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
    const big = `event: message\nid: 7\ndata: ${JSON.stringify(response(5))}`;
    const body = capUpstreamAnswer({ body: `${progress}\n\n${big}\n\n`, contentType: 'text/event-stream', maxContentItems: 2 })!;
    const events = body.split('\n\n');
    expect(events[0]).toBe(progress);
    expect(events[1].split('\n').slice(0, 2)).toEqual(['event: message', 'id: 7']);
    const data = JSON.parse(events[1].split('\n')[2].slice('data: '.length)) as ReturnType<typeof response>;
    expect(data.result.content).toEqual([...items(1), { type: 'text', text: droppedItemsNote(4, 2) }]);
  });

  it('joins an event whose JSON spans several data lines', () => {
    const json = JSON.stringify(response(3), null, 1).split('\n');
    const body = capUpstreamAnswer({
      body: json.map((line) => `data: ${line}`).join('\n'),
      contentType: 'text/event-stream',
      maxContentItems: 1,
    })!;
    const data = JSON.parse(body.slice('data: '.length)) as ReturnType<typeof response>;
    expect(data.result.content).toEqual([{ type: 'text', text: droppedItemsNote(3, 1) }]);
  });
});
