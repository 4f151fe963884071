import { useState } from 'preact/hooks';
import { api, ApiError, call, type Decision, type Invocation } from '../api/client';
import { ErrorNote, Field, formatTime, useAction, useLoad } from '../ui';

const PAGE = 20;

// The project's parked calls, oldest first. The log lists them with their arguments as stored (redacted and
// size-capped); each is opened on its own, because GET .../invocations/{id} gives an admin or approver key
// the arguments exactly as they will run (a toolset's directory joined into the paths), which is what a
// person approves.
export function ApprovalsTab(props: { projectId: string }) {
  const queue = useLoad(
    () =>
      call(
        api.GET('/v1/projects/{projectId}/invocations', {
          params: { path: { projectId: props.projectId }, query: { status: 'pending_approval', limit: PAGE } },
        }),
      ),
    [props.projectId],
  );
  return (
    <section aria-labelledby="approvals-h">
      <div class="tool-head">
        <h2 id="approvals-h">Waiting for approval</h2>
        <button type="button" class="secondary" onClick={queue.reload} disabled={queue.loading}>
          Refresh
        </button>
      </div>
      <p class="hint">
        Approve runs the call now and shows what it answered; deny refuses it and it never runs. A call nobody decides in time expires.
      </p>
      <ErrorNote error={queue.error} />
      {queue.data && queue.data.items.length === 0 ? <p>No calls are waiting for approval.</p> : null}
      <ul class="tool-list">
        {queue.data?.items.map((item) => (
          <PendingCall key={item.id} projectId={props.projectId} item={item} />
        ))}
      </ul>
      {queue.data?.nextCursor ? <p class="hint">The oldest {PAGE} are shown: decide them, then refresh to see the next.</p> : null}
    </section>
  );
}

function PendingCall(props: { projectId: string; item: Invocation }) {
  const { item } = props;
  const path = { projectId: props.projectId, invocationId: item.id };
  const detail = useLoad(() => call(api.GET('/v1/projects/{projectId}/invocations/{invocationId}', { params: { path } })), [item.id]);
  const [reason, setReason] = useState('');
  const [decision, setDecision] = useState<Decision>();
  const deciding = useAction();
  const approval = detail.data?.approval;
  const headingId = `call-${item.id}`;

  const decide = (what: 'approve' | 'deny') =>
    deciding.run(async () => {
      const body = reason.trim() ? { reason: reason.trim() } : {};
      const options = { params: { path }, body };
      // An approval names the digest of the arguments shown: arguments that changed since are not run (409).
      const digest = approval?.argumentsDigest;
      try {
        setDecision(
          await call(
            what === 'approve'
              ? api.POST('/v1/projects/{projectId}/invocations/{invocationId}/approve', {
                  params: { path },
                  body: digest ? { ...body, argumentsDigest: digest } : body,
                })
              : api.POST('/v1/projects/{projectId}/invocations/{invocationId}/deny', options),
          ),
        );
      } catch (error) {
        // Decided elsewhere, expired, or its arguments changed meanwhile (409): show where it stands now.
        if (error instanceof ApiError && error.status === 409) detail.reload();
        throw error;
      }
    });

  return (
    <li class="card" aria-labelledby={headingId}>
      <div class="tool-head">
        <h3 id={headingId}>
          <code>{item.tool}</code>
        </h3>
        <span class="hint">
          {item.toolset ? (
            <>
              through toolset <code>{item.toolset}</code>
              {item.exposedTool && item.exposedTool !== item.tool ? (
                <>
                  {' '}
                  as <code>{item.exposedTool}</code>
                </>
              ) : null}
              ,{' '}
            </>
          ) : null}
          asked {formatTime(item.startedAt)} over {item.channel}
          {approval ? <> · expires {formatTime(approval.expiresAt)}</> : null}
        </span>
      </div>
      <ErrorNote error={detail.error} />
      {approval?.pendingArguments !== undefined ? (
        <>
          <p class="hint">
            Arguments exactly as they will run, secrets included
            {approval.pathPrefix ? (
              <>
                {' '}
                (the toolset confines this tool to <code>{approval.pathPrefix}/</code>: the paths below are in the workspace, that directory
                joined in)
              </>
            ) : null}
            :
          </p>
          <pre data-testid="pending-arguments">{JSON.stringify(approval.pendingArguments, null, 2)}</pre>
          {approval.argumentsDigest ? (
            <p class="hint">
              Arguments digest (SHA-256, as approval routes announce it):{' '}
              <code data-testid="arguments-digest">{approval.argumentsDigest}</code>
            </p>
          ) : null}
        </>
      ) : null}
      {decision ? (
        <DecisionNote decision={decision} />
      ) : approval && approval.status !== 'pending' ? (
        <p class="note" role="status">
          Already {approval.status}
          {approval.decidedBy ? <> by {approval.decidedBy.name ?? approval.decidedBy.keyId}</> : null}.
        </p>
      ) : approval ? (
        <form onSubmit={(event) => event.preventDefault()} aria-label={`Decide the ${item.tool} call`}>
          <Field id={`reason-${item.id}`} label="Reason (optional)" hint="Kept with the decision; a denial tells the caller why">
            <input
              id={`reason-${item.id}`}
              value={reason}
              maxLength={1000}
              aria-describedby={`reason-${item.id}-hint`}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
          </Field>
          <div class="decide">
            <button type="button" disabled={deciding.busy} onClick={() => void decide('approve')}>
              Approve
            </button>
            <button type="button" class="danger" disabled={deciding.busy} onClick={() => void decide('deny')}>
              Deny
            </button>
          </div>
        </form>
      ) : null}
      <ErrorNote error={deciding.error} label="Not decided" />
    </li>
  );
}

function DecisionNote(props: { decision: Decision }) {
  const { decision } = props;
  const status = typeof decision.outcome.status === 'string' ? decision.outcome.status : undefined;
  return (
    <div class={`note ${decision.decision === 'approved' && status === 'ok' ? 'ok' : ''}`} role="status" data-testid="decision">
      <p>
        <strong>{decision.decision === 'approved' ? 'Approved' : 'Denied'}</strong> by <strong>{decision.decidedBy.name}</strong> (key{' '}
        <code>{decision.decidedBy.keyId}</code>)
        {status ? (
          <>
            {' '}
            · outcome <span class={`status status-${status}`}>{status}</span>
          </>
        ) : null}
      </p>
      <details>
        <summary>what the call answered</summary>
        <pre>{JSON.stringify(decision.outcome, null, 2)}</pre>
      </details>
    </div>
  );
}
