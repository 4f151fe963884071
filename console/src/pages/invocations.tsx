import { useEffect, useState } from 'preact/hooks';
import { api, call, type Invocation, type InvocationStatus } from '../api/client';
import { tailEvents, type ToolEventMessage } from '../api/events';
import { ErrorNote, Field, Table, asError, formatTime, useAction } from '../ui';

const STATUSES: InvocationStatus[] = ['ok', 'error', 'timeout', 'invalid_arguments', 'denied', 'pending_approval', 'expired'];

export function InvocationsTab(props: { projectId: string }) {
  return (
    <>
      <LiveTail projectId={props.projectId} />
      <InvocationLog projectId={props.projectId} />
    </>
  );
}

function InvocationLog(props: { projectId: string }) {
  const [tool, setTool] = useState('');
  const [status, setStatus] = useState<InvocationStatus | ''>('');
  const [items, setItems] = useState<Invocation[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const loading = useAction();

  const load = (from: string | null) => async () => {
    const page = await call(
      api.GET('/v1/projects/{projectId}/invocations', {
        params: {
          path: { projectId: props.projectId },
          query: { limit: 50, ...(from ? { cursor: from } : {}), ...(tool ? { tool } : {}), ...(status ? { status } : {}) },
        },
      }),
    );
    setItems((previous) => (from ? [...previous, ...page.items] : page.items));
    setCursor(page.nextCursor ?? null);
    setLoaded(true);
  };

  useEffect(() => {
    void loading.run(load(null));
  }, [props.projectId]);

  return (
    <section class="card" aria-labelledby="log-h">
      <h2 id="log-h">Invocation log</h2>
      <form class="row" onSubmit={loading.submit(load(null))}>
        <Field id="log-tool" label="Tool">
          <input id="log-tool" value={tool} onInput={(e) => setTool(e.currentTarget.value)} />
        </Field>
        <Field id="log-status" label="Status">
          <select id="log-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as InvocationStatus | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorNote error={loading.error} />
      {loaded && items.length === 0 ? <p>No invocations match.</p> : null}
      {items.length > 0 ? (
        <Table
          caption="Invocations, oldest first"
          captionHidden
          columns={['Started', 'Tool', 'Status', 'Channel', 'Caller', 'ms', 'Details']}
        >
          {items.map((item) => (
            <tr key={item.id}>
              <td>{formatTime(item.startedAt)}</td>
              <td>
                <code>{item.tool}</code>
              </td>
              <td>
                <span class={`status status-${item.status}`}>{item.status}</span>
              </td>
              <td>{item.channel}</td>
              <td>
                {item.caller ? <span title={`key ${item.caller.keyId}`}>{item.caller.name ?? <code>{item.caller.keyId}</code>}</span> : '—'}
              </td>
              <td>{Math.round(item.durationMs)}</td>
              <td>
                <details>
                  <summary>arguments{item.errorMessage ? ', error' : ''}</summary>
                  <pre>{JSON.stringify(item.arguments, null, 2)}</pre>
                  {item.errorMessage ? <pre class="model-message">{item.errorMessage}</pre> : null}
                  {item.decidedBy ? <p class="hint">Decided by {item.decidedBy.name ?? <code>{item.decidedBy.keyId}</code>}</p> : null}
                </details>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      {cursor ? (
        <button type="button" class="secondary" onClick={() => void loading.run(load(cursor))}>
          Load more
        </button>
      ) : null}
    </section>
  );
}

function LiveTail(props: { projectId: string }) {
  const [on, setOn] = useState(true);
  const [events, setEvents] = useState<ToolEventMessage[]>([]);
  const [error, setError] = useState<Error>();
  const [connected, setConnected] = useState(false);

  useEffect(() => {
    if (!on) return;
    const controller = new AbortController();
    setError(undefined);
    setConnected(true);
    tailEvents(props.projectId, controller.signal, (event) => {
      // Heartbeats keep proxies from closing the stream; only tool events are shown.
      if (event.type.startsWith('tool.')) setEvents((previous) => [event, ...previous].slice(0, 200));
    })
      .catch((e: unknown) => {
        if (!controller.signal.aborted) setError(asError(e));
      })
      .finally(() => setConnected(false));
    return () => controller.abort();
  }, [props.projectId, on]);

  return (
    <section class="card" aria-labelledby="tail-h">
      <div class="tool-head">
        <h2 id="tail-h">Live tail</h2>
        <span class={`badge ${connected ? 'live' : ''}`}>{connected ? 'connected' : 'stopped'}</span>
        <button type="button" class="secondary" onClick={() => setOn(!on)}>
          {on ? 'Pause' : 'Resume'}
        </button>
      </div>
      <ErrorNote error={error} label="Live tail" />
      {events.length === 0 ? <p class="hint">Waiting for calls to this project…</p> : null}
      <ol class="tail" aria-live="polite" aria-label="Tool events, newest first">
        {events.map((event, index) => (
          <li key={`${event.id ?? ''}-${index}`}>
            <span class="time">{event.data.at ? new Date(event.data.at).toLocaleTimeString() : ''}</span>{' '}
            <span class="event">{event.type}</span> <code>{event.data.tool}</code>{' '}
            {event.data.status ? <span class={`status status-${event.data.status}`}>{event.data.status}</span> : null}
            {event.data.caller?.name ? <span class="hint"> by {event.data.caller.name}</span> : null}
            {event.data.error ? <span class="tail-error"> {event.data.error.message}</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}
