import { createHash } from 'node:crypto';
import { argumentsDigest } from '../common/json/arguments-digest.js';
import { type ApprovalEvent, approvalUrlOf, slackMessage } from './approval-events.js';

const requested = (keyName: string, approvalUrl: string | null): ApprovalEvent => ({
  type: 'approval.requested',
  timestamp: '2026-12-01T00:00:00.000Z',
  data: {
    invocationId: 'i-1',
    projectId: 'p-1',
    tool: 'write_file',
    requestedBy: { keyId: 'k-1', keyName },
    argumentsDigest: 'ab'.repeat(32),
    expiresAt: '2026-12-01T00:15:00.000Z',
    approvalUrl,
  },
});

describe('approval events', () => {
  it('digests the arguments whatever the order of their keys, at every level', () => {
    const a = argumentsDigest({ path: 'a.txt', options: { mode: 1, flag: true } });
    expect(argumentsDigest({ options: { flag: true, mode: 1 }, path: 'a.txt' })).toBe(a);
    expect(a).toBe(createHash('sha256').update('{"options":{"flag":true,"mode":1},"path":"a.txt"}').digest('hex'));
    expect(argumentsDigest({ path: 'b.txt', options: { mode: 1, flag: true } })).not.toBe(a);
  });

  it("links the console's approvals page under PUBLIC_URL, and nothing without one", () => {
    expect(approvalUrlOf('https://tg.example.com', 'p', 'i')).toBe('https://tg.example.com/console/projects/p/approvals#call-i');
    expect(approvalUrlOf(null, 'p', 'i')).toBeNull();
  });

  it('renders a Slack message whose names cannot mention, link or format, with a button only when there is a page', () => {
    const message = slackMessage(
      requested('<!channel> *bot* <https://evil.example|click>', 'https://tg.example.com/console/projects/p/approvals#call-i'),
    );
    const text = JSON.stringify(message.blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://evil');
    expect(text).toContain('&lt;!channel&gt; bot');
    expect(text).toContain('ab'.repeat(32));
    expect((message.blocks as Array<{ type: string }>).map((b) => b.type)).toEqual(['section', 'context', 'actions']);
    expect((slackMessage(requested('bot', null)).blocks as Array<{ type: string }>).map((b) => b.type)).toEqual(['section', 'context']);
  });
});
