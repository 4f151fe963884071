// The events a parked call's approval routes receive. They name the call and its arguments' digest, never
// the arguments: nothing a tool was given (a secret argument, a file's content) leaves through a route.

export type ApprovalEventType = 'approval.requested' | 'approval.decided';
export type RouteKind = 'webhook' | 'slack';

export interface Requester {
  keyId: string;
  keyName: string;
  user?: string;
  oauthClientId?: string;
}

export interface ApprovalRequestedData {
  invocationId: string;
  projectId: string;
  tool: string;
  toolset?: string;
  requestedBy: Requester;
  argumentsDigest: string;
  expiresAt: string;
  approvalUrl: string | null;
}

export interface ApprovalDecidedData {
  invocationId: string;
  projectId: string;
  tool: string;
  toolset?: string;
  decision: 'approved' | 'denied' | 'expired';
  // Null for an expiry: nobody decided.
  decidedBy: { keyId: string; keyName: string } | null;
  reason: string | null;
  decidedAt: string;
  argumentsDigest: string | null;
  approvalUrl: string | null;
}

export type ApprovalEvent =
  | { type: 'approval.requested'; timestamp: string; data: ApprovalRequestedData }
  | { type: 'approval.decided'; timestamp: string; data: ApprovalDecidedData };

// The console's page for a project's parked calls, under PUBLIC_URL; null without one (no link is guessed
// from a request's Host).
export const approvalUrlOf = (publicUrl: string | null, projectId: string, invocationId: string): string | null =>
  publicUrl === null ? null : `${publicUrl}/console/projects/${projectId}/approvals#call-${invocationId}`;

// A Slack incoming-webhook message (Block Kit): what is asked, by whom, the digest, and a button to the page.
export function slackMessage(event: ApprovalEvent): Record<string, unknown> {
  const { data } = event;
  const tool = data.toolset ? `\`${data.tool}\` (toolset \`${data.toolset}\`)` : `\`${data.tool}\``;
  let headline: string;
  let fields: string[];
  if (event.type === 'approval.requested') {
    const who = event.data.requestedBy;
    const asker = `${plain(who.keyName)}${who.user ? ` for ${plain(who.user)}` : ''}${who.oauthClientId ? ` (OAuth client ${plain(who.oauthClientId)})` : ''}`;
    headline = `:raised_hand: A call of ${tool} waits for approval`;
    fields = [`*Asked by*\n${asker}`, `*Expires*\n${event.data.expiresAt}`, `*Arguments digest*\n\`${event.data.argumentsDigest}\``];
  } else {
    const decided = event.data;
    headline = `${decided.decision === 'approved' ? ':white_check_mark:' : ':no_entry:'} The call of ${tool} was ${decided.decision}`;
    fields = [
      `*Decided by*\n${decided.decidedBy ? plain(decided.decidedBy.keyName) : 'nobody (it expired)'}`,
      `*At*\n${decided.decidedAt}`,
    ];
    if (decided.reason) fields.push(`*Reason*\n${plain(decided.reason)}`);
  }
  const blocks: Record<string, unknown>[] = [
    { type: 'section', text: { type: 'mrkdwn', text: headline }, fields: fields.map((text) => ({ type: 'mrkdwn', text })) },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `Invocation \`${data.invocationId}\` · project \`${data.projectId}\`` }] },
  ];
  if (data.approvalUrl !== null && event.type === 'approval.requested') {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open in Toolgate' },
          url: data.approvalUrl,
          style: 'primary',
          action_id: 'open_approval',
        },
      ],
    });
  }
  return { text: headline, blocks };
}

// A key's or a person's name in mrkdwn: no markup, mention or link of its own.
const plain = (text: string) => text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!).replace(/[*_~`]/g, '');
