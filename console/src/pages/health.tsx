import { api, call } from '../api/client';
import { ErrorNote, useLoad } from '../ui';

// The console sends the operator's ADMIN_TOKEN with every call, and /health/ready answers the operator with
// the details it keeps from the public (anyone else gets the status only).
export function HealthPage() {
  const ready = useLoad(() => call(api.GET('/health/ready')), []);
  const sandbox = ready.data?.commandSandbox;
  const auditQueue = ready.data?.auditQueue;
  return (
    <>
      <h1>Health</h1>
      <button type="button" class="secondary" onClick={ready.reload}>
        Check again
      </button>
      <ErrorNote error={ready.error} label="Not ready" />
      {ready.data ? (
        <dl class="card facts">
          <dt>Readiness</dt>
          <dd>
            <span class="status status-ok">{ready.data.status}</span> (the database answers)
          </dd>
          {sandbox ? (
            <>
              <dt>Command sandbox</dt>
              <dd>
                <span class={`status ${sandbox.ready ? 'status-ok' : 'status-error'}`}>
                  {sandbox.ready ? 'ready' : 'refusing commands'}
                </span>{' '}
                mode <code>{sandbox.mode}</code>
                {sandbox.version ? <> · bubblewrap {sandbox.version}</> : null}
              </dd>
            </>
          ) : null}
          {auditQueue ? (
            <>
              <dt>Audit queue</dt>
              <dd>
                <span class={`status ${auditQueue.pending < auditQueue.capacity / 2 ? 'status-ok' : 'status-error'}`}>
                  {auditQueue.pending} waiting
                </span>{' '}
                of {auditQueue.capacity} (tool calls wait for room when it is full)
              </dd>
            </>
          ) : (
            <>
              <dt>Details</dt>
              <dd>Shown to the operator only: sign in with ADMIN_TOKEN</dd>
            </>
          )}
          {sandbox?.reason ? (
            <>
              <dt>Why</dt>
              <dd>{sandbox.reason}</dd>
            </>
          ) : null}
          {sandbox?.fix ? (
            <>
              <dt>Fix</dt>
              <dd>{sandbox.fix}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
    </>
  );
}
