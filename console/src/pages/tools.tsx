import { useState } from 'preact/hooks';
import { api, type ApiError, call, toApiError, type Tool } from '../api/client';
import { may, useRole } from '../roles';
import { ErrorNote, useAction, useLoad } from '../ui';
import { SchemaForm, argumentsFrom, type JsonSchema } from './schema-form';

export function ToolsTab(props: { projectId: string }) {
  // The native format is ToolDto; the listing's items are declared as plain objects because other formats differ.
  const tools = useLoad(
    async () =>
      (
        await call(
          api.GET('/v1/projects/{projectId}/tools', { params: { path: { projectId: props.projectId }, query: { format: 'native' } } }),
        )
      ).tools as Tool[],
    [props.projectId],
  );
  const [open, setOpen] = useState<string>();
  // An approver key reads the tools but may not call them.
  const mayInvoke = may(useRole(), 'invoke');
  return (
    <section aria-labelledby="tools-h">
      <h2 id="tools-h">Tools</h2>
      <ErrorNote error={tools.error} />
      <ul class="tool-list">
        {tools.data?.map((tool) => (
          <li key={tool.name} class="card">
            <div class="tool-head">
              <h3>
                <code>{tool.name}</code>
              </h3>
              <span class="badge">{tool.source}</span>
              {mayInvoke ? (
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={open === tool.name}
                  aria-controls={`try-${tool.name}`}
                  onClick={() => setOpen(open === tool.name ? undefined : tool.name)}
                >
                  {open === tool.name ? 'Close' : 'Try it'}
                </button>
              ) : null}
            </div>
            <p>{tool.description}</p>
            {mayInvoke && open === tool.name ? <TryIt projectId={props.projectId} tool={tool} /> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

type Outcome = { kind: 'result'; status: string; body: unknown } | { kind: 'refused'; error: ApiError };

function TryIt(props: { projectId: string; tool: Tool }) {
  const schema = props.tool.inputSchema as JsonSchema;
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [outcome, setOutcome] = useState<Outcome>();
  const running = useAction();

  const run = running.submit(async () => {
    setOutcome(undefined);
    const args = argumentsFrom(schema, values);
    const {
      data,
      error: failure,
      response,
    } = await api.POST('/v1/projects/{projectId}/tools/{toolName}/invoke', {
      params: { path: { projectId: props.projectId, toolName: props.tool.name } },
      body: { arguments: args },
    });
    if (!response.ok) setOutcome({ kind: 'refused', error: toApiError(failure, response) });
    else
      setOutcome({
        kind: 'result',
        status: response.status === 202 ? 'pending_approval' : ((data as { status?: string } | undefined)?.status ?? 'ok'),
        body: data,
      });
  });

  return (
    <form id={`try-${props.tool.name}`} class="try" onSubmit={run} aria-label={`Try ${props.tool.name}`}>
      <SchemaForm idPrefix={props.tool.name} schema={schema} values={values} onChange={setValues} />
      <button type="submit" disabled={running.busy}>
        {running.busy ? 'Running…' : `Invoke ${props.tool.name}`}
      </button>
      <ErrorNote error={running.error} />
      <div aria-live="polite">
        {outcome?.kind === 'refused' ? (
          <div class="answer refused" data-testid="tool-answer">
            <p>
              <strong>HTTP {outcome.error.status}</strong> <code>{outcome.error.code}</code> — what the model is told:
            </p>
            <pre class="model-message">{outcome.error.message}</pre>
          </div>
        ) : null}
        {outcome?.kind === 'result' ? (
          <div class={`answer ${outcome.status === 'ok' ? 'ok' : 'refused'}`} data-testid="tool-answer">
            <p>
              <strong>Status {outcome.status}</strong>
            </p>
            <pre>{JSON.stringify(outcome.body, null, 2)}</pre>
          </div>
        ) : null}
      </div>
    </form>
  );
}
