import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '../api/client';
import { ErrorNote, Field, ShownOnce, Table, formatTime, useAction, useLoad } from '../ui';

type Route = Schemas['ApprovalRouteResponseDto'];
type Created = Schemas['CreatedApprovalRouteResponseDto'];
type Kind = Schemas['CreateApprovalRouteDto']['kind'];

const RECENT = 10;

// Where the project's parked calls are announced (admin keys only): a signed webhook or a Slack incoming
// webhook. The service shows a Slack URL by its origin only, and a webhook's secret once, when it is made.
export function ApprovalRoutesSection(props: { projectId: string }) {
  const path = { projectId: props.projectId };
  const routes = useLoad(() => call(api.GET('/v1/projects/{projectId}/approval-routes', { params: { path } })), [props.projectId]);
  const [kind, setKind] = useState<Kind>('webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [created, setCreated] = useState<Created>();
  const adding = useAction();
  const listAction = useAction();

  const add = adding.submit(async () => {
    setCreated(undefined);
    const body = { kind, url: url.trim(), ...(kind === 'webhook' && secret.trim() && { secret: secret.trim() }) };
    setCreated(await call(api.POST('/v1/projects/{projectId}/approval-routes', { params: { path }, body })));
    setUrl('');
    setSecret('');
    routes.reload();
  });

  const remove = (route: Route) =>
    listAction.run(async () => {
      await call(api.DELETE('/v1/projects/{projectId}/approval-routes/{routeId}', { params: { path: { ...path, routeId: route.id } } }));
      if (created?.id === route.id) setCreated(undefined);
      routes.reload();
    });

  return (
    <section class="card" aria-labelledby="routes-h">
      <h2 id="routes-h">Approval routes</h2>
      <p class="hint">
        Every call this project parks is announced to each route (approval.requested), and so is its decision (approval.decided). The
        arguments are never sent: the approver reads them here.
      </p>
      <ErrorNote error={routes.error ?? listAction.error} />
      {routes.data && routes.data.items.length === 0 ? <p>No approval routes yet.</p> : null}
      <ul class="plain">
        {routes.data?.items.map((route) => (
          <RouteItem key={route.id} projectId={props.projectId} route={route} onDelete={() => void remove(route)} />
        ))}
      </ul>
      <h3>Add a route</h3>
      <form onSubmit={add}>
        <div class="row">
          <Field id="route-kind" label="Kind">
            <select id="route-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
              <option value="webhook">webhook</option>
              <option value="slack">slack</option>
            </select>
          </Field>
          <Field id="route-url" label="URL" hint="http(s); private and loopback addresses are refused unless the operator allows the host">
            <input
              id="route-url"
              type="url"
              required
              value={url}
              aria-describedby="route-url-hint"
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </Field>
        </div>
        {kind === 'webhook' ? (
          <Field id="route-secret" label="Signing secret (optional)" hint="whsec_ and base64; left empty, one is made and shown once">
            <input
              id="route-secret"
              autocomplete="off"
              value={secret}
              aria-describedby="route-secret-hint"
              onInput={(e) => setSecret(e.currentTarget.value)}
            />
          </Field>
        ) : null}
        <ErrorNote error={adding.error} label="Not added" />
        {created ? (
          <ShownOnce label="Its signing secret, shown this once" secret={created.secret}>
            Added the {created.kind} route to <code>{created.url}</code>.
          </ShownOnce>
        ) : null}
        <button type="submit" disabled={adding.busy}>
          Add route
        </button>
      </form>
    </section>
  );
}

function RouteItem(props: { projectId: string; route: Route; onDelete: () => void }) {
  const { route } = props;
  const [open, setOpen] = useState(false);
  const label = `${route.kind} route ${route.url}`;
  return (
    <li class="approval-route">
      <div class="tool-head">
        <h3>
          {route.kind} <code>{route.url}</code>
        </h3>
        <div class="decide">
          <button type="button" class="secondary" aria-expanded={open} aria-label={`Deliveries of ${label}`} onClick={() => setOpen(!open)}>
            {open ? 'Hide deliveries' : 'Deliveries'}
          </button>
          <button type="button" class="secondary" aria-label={`Delete ${label}`} onClick={props.onDelete}>
            Delete
          </button>
        </div>
      </div>
      <p class="hint">
        {route.signed ? 'Signed, ' : null}added {formatTime(route.createdAt)}
        {route.createdBy ? ` by ${route.createdBy}` : null}
      </p>
      {open ? <Deliveries projectId={props.projectId} routeId={route.id} /> : null}
    </li>
  );
}

function Deliveries(props: { projectId: string; routeId: string }) {
  const path = { projectId: props.projectId, routeId: props.routeId };
  const deliveries = useLoad(
    () => call(api.GET('/v1/projects/{projectId}/approval-routes/{routeId}/deliveries', { params: { path, query: { limit: RECENT } } })),
    [props.routeId],
  );
  return (
    <div class="deliveries">
      <ErrorNote error={deliveries.error} />
      {deliveries.data && deliveries.data.items.length === 0 ? <p>Nothing sent yet.</p> : null}
      {deliveries.data && deliveries.data.items.length > 0 ? (
        <Table
          caption={`The ${RECENT} most recent deliveries, newest first`}
          columns={['Event', 'Call', 'Status', 'Attempts', 'Last answer', 'Queued']}
        >
          {deliveries.data.items.map((d) => (
            <tr key={d.id} class="delivery">
              <td>{d.eventType}</td>
              <td>
                <code>{d.invocationId}</code>
              </td>
              <td>
                <span class={`status status-${d.status}`}>{d.status}</span>
                {d.nextAttemptAt ? <span class="hint"> next {formatTime(d.nextAttemptAt)}</span> : null}
              </td>
              <td>{d.attempts}</td>
              <td>{[d.lastStatusCode, d.lastError].filter((part) => part !== null).join(' ') || '—'}</td>
              <td>{formatTime(d.createdAt)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      <button type="button" class="secondary" onClick={deliveries.reload} disabled={deliveries.loading}>
        Refresh deliveries
      </button>
    </div>
  );
}
