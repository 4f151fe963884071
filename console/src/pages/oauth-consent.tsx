import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { ErrorNote, Field, formatTime, useAction, useLoad } from '../ui';

// How long a consent may last; the client's tokens never outlive it, nor the signed-in key (revoking that
// key ends it too).
const DURATIONS: Array<{ label: string; seconds: number }> = [
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86_400 },
  { label: '30 days', seconds: 30 * 86_400 },
  { label: '1 year', seconds: 365 * 86_400 },
];
const DEFAULT_DURATION = 2;

// The consent page of the OAuth authorization endpoint (/console/oauth/consent?request=<id>): who asks, for
// which project, sent back where; the person chooses the tools and how long, then approves or denies, and the
// browser goes back to the client with what the service answered.
export function OAuthConsentPage() {
  const requestId = new URLSearchParams(window.location.search).get('request') ?? '';
  const request = useLoad(() => call(api.GET('/v1/oauth/requests/{requestId}', { params: { path: { requestId } } })), [requestId]);
  const projectId = request.data?.project.id;
  const tools = useLoad(
    () => (projectId ? call(api.GET('/v1/projects/{projectId}/tools', { params: { path: { projectId } } })) : Promise.resolve(undefined)),
    [projectId],
  );
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [duration, setDuration] = useState(DEFAULT_DURATION);
  const deciding = useAction();

  const decide = (approve: boolean) =>
    deciding.run(async () => {
      const expiresIn = DURATIONS[duration]?.seconds;
      const body = approve ? { approve, ...(chosen ? { tools: [...chosen] } : {}), ...(expiresIn ? { expiresIn } : {}) } : { approve };
      const answer = await call(api.POST('/v1/oauth/requests/{requestId}/decision', { params: { path: { requestId } }, body }));
      window.location.assign(answer.redirectTo);
    });

  if (!request.data) {
    return (
      <section aria-labelledby="consent-h">
        <h1 id="consent-h">Sign-in request</h1>
        {request.loading ? (
          <p role="status">Loading the request…</p>
        ) : (
          <ErrorNote error={request.error} label="This request cannot be decided" />
        )}
      </section>
    );
  }
  const r = request.data;
  const names = (tools.data as { tools?: Array<{ name: string }> } | undefined)?.tools?.map((t) => t.name) ?? [];
  // Approving with no choice made grants every tool: only once the person has seen which (a toolset names them).
  const toolsShown = Boolean(r.toolset) || tools.data !== undefined;
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen ?? names);
    if (on) next.add(name);
    else next.delete(name);
    setChosen(next.size === names.length ? null : next);
  };
  return (
    <section aria-labelledby="consent-h" class="consent">
      <h1 id="consent-h">
        <span data-testid="client-name">{r.client.name}</span> asks to use{' '}
        {r.toolset ? (
          <>
            toolset <span data-testid="toolset">{r.toolset}</span> of project {r.project.name}
          </>
        ) : (
          <>project {r.project.name}</>
        )}
      </h1>
      <dl>
        <dt>Client</dt>
        <dd>
          {r.client.verifiedOrigin ? (
            <>
              Described by <strong data-testid="client-origin">{r.client.verifiedOrigin}</strong> (its metadata document was fetched from
              there)
            </>
          ) : (
            <>Registered itself: its name is only its own claim</>
          )}
        </dd>
        <dt>Sent back to</dt>
        <dd>
          <code data-testid="redirect-uri">{r.redirectUri}</code>
        </dd>
        <dt>MCP server</dt>
        <dd>
          <code>{r.resource}</code>
        </dd>
        <dt>Scopes</dt>
        <dd>{r.scopes.join(', ')}</dd>
        <dt>Decide before</dt>
        <dd>{formatTime(r.expiresAt)}</dd>
      </dl>
      {r.callsNeedApproval ? (
        <p role="note" data-testid="calls-need-approval">
          You sign in with an approver key: each call this client makes will wait for another person's approval.
        </p>
      ) : null}
      {r.toolset ? (
        // The toolset already says which tools, under which names: the client sees those and nothing else.
        <p data-testid="toolset-tools">It may list and call the tools of toolset {r.toolset}, as the toolset shows them, and no others.</p>
      ) : (
        <fieldset>
          <legend>Tools it may list and call</legend>
          <ErrorNote error={tools.error} label="The project's tools could not be listed" />
          {tools.loading && !tools.data ? <p role="status">Loading the project's tools…</p> : null}
          {names.map((name) => (
            <label key={name} class="check">
              <input
                type="checkbox"
                name="tool"
                value={name}
                checked={chosen === null || chosen.has(name)}
                onChange={(e) => toggle(name, (e.target as HTMLInputElement).checked)}
              />{' '}
              {name}
            </label>
          ))}
        </fieldset>
      )}
      <Field id="consent-duration" label="For how long">
        <select id="consent-duration" value={duration} onChange={(e) => setDuration(Number((e.target as HTMLSelectElement).value))}>
          {DURATIONS.map((d, i) => (
            <option key={d.label} value={i}>
              {d.label}
            </option>
          ))}
        </select>
      </Field>
      <ErrorNote error={deciding.error} label="The decision was not taken" />
      <div class="actions">
        <button
          type="button"
          onClick={() => void decide(true)}
          disabled={deciding.busy || (chosen !== null && chosen.size === 0) || !toolsShown}
        >
          Approve
        </button>
        <button type="button" class="secondary" onClick={() => void decide(false)} disabled={deciding.busy}>
          Deny
        </button>
      </div>
    </section>
  );
}
