import { api, call } from '../api/client';
import { ErrorNote, useLoad } from '../ui';

export function HealthPage() {
  const ready = useLoad(() => call(api.GET('/health/ready')), []);
  const sandbox = ready.data?.commandSandbox;
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
          <dt>Command sandbox</dt>
          <dd>
            <span class={`status ${sandbox?.ready ? 'status-ok' : 'status-error'}`}>{sandbox?.ready ? 'ready' : 'refusing commands'}</span> mode <code>{sandbox?.mode}</code>
            {sandbox?.version ? <> · bubblewrap {sandbox.version}</> : null}
          </dd>
          <dt>Audit queue</dt>
          <dd>
            <span class={`status ${ready.data.auditQueue.pending < ready.data.auditQueue.capacity / 2 ? 'status-ok' : 'status-error'}`}>
              {ready.data.auditQueue.pending} waiting
            </span>{' '}
            of {ready.data.auditQueue.capacity} (tool calls wait for room when it is full)
          </dd>
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
