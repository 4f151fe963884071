import type { Subscription } from 'rxjs';
import { InProcessChangeBus } from '../../common/bus/change-bus.js';
import { type ServerSentEvent, ToolEvents } from './tool-events.js';

describe('ToolEvents', () => {
  let events: ToolEvents;
  let subscription: Subscription;
  const seen: ServerSentEvent[] = [];

  beforeEach(() => {
    seen.length = 0;
    events = new ToolEvents(new InProcessChangeBus());
    subscription = events.stream('t1', 'p1').subscribe((event) => seen.push(event));
  });
  afterEach(() => {
    subscription.unsubscribe();
    events.onModuleDestroy();
  });

  const started = (name: string | null) =>
    events.emit({
      type: 'tool.started',
      tenantId: 't1',
      projectId: 'p1',
      invocationId: 'i1',
      tool: 'list_files',
      channel: 'mcp',
      caller: { keyId: 'k1', name },
    });

  it('carries the calling key as the audit row names it', () => {
    started('Claude (OAuth)');
    started(null);
    expect(seen.map((event) => event.data)).toEqual([
      expect.objectContaining({ caller: { keyId: 'k1', name: 'Claude (OAuth)' } }),
      expect.objectContaining({ caller: { keyId: 'k1', name: null } }),
    ]);
    expect(seen.some((event) => 'truncated' in event.data)).toBe(false);
  });

  // A token of an external issuer is named after its claims, which no limit of ours bounds.
  it('cuts a caller name too long for one bus message, and says so', () => {
    started(`client-${'x'.repeat(10_000)}`);
    const data = seen[0].data as { caller: { keyId: string; name: string }; truncated?: true };
    expect(data.caller.keyId).toBe('k1');
    expect(data.caller.name).toMatch(/^client-x+…$/);
    expect(data.caller.name.length).toBe(201);
    expect(data.truncated).toBe(true);
  });
});
