import { useState } from 'preact/hooks';
import { api, ApiError, call, type Schemas } from '../api/client';
import { ErrorNote, Field, Table, asError, formatTime, useAction, useLoad } from '../ui';

type Toolset = Schemas['ToolsetResponseDto'];
type Mode = Schemas['ToolsetBodyDto']['mode'];

interface Collision {
  tool: string;
  conflictsWith: string;
}

const EXAMPLE_TOOLS = JSON.stringify(
  [
    { select: 'read_file', name: 'read_doc', description: 'Read a page of the handbook', pathPrefix: 'docs' },
    { select: 'fetch_url', fixedArguments: { method: 'GET' } },
    { select: 'list_*' },
  ],
  null,
  2,
);

// A project's toolsets: the list, and one form that creates a toolset or replaces the one being edited.
export function ToolsetsTab(props: { projectId: string }) {
  const path = { projectId: props.projectId };
  const toolsets = useLoad(() => call(api.GET('/v1/projects/{projectId}/toolsets', { params: { path } })), [props.projectId]);
  const [editing, setEditing] = useState<string | null>(null);
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [mode, setMode] = useState<Mode>('direct');
  const [tools, setTools] = useState(EXAMPLE_TOOLS);
  const [saved, setSaved] = useState<Toolset>();
  const action = useAction();
  const listAction = useAction();

  const error = action.error;
  const collisions = error instanceof ApiError && Array.isArray(error.details?.collisions) ? (error.details.collisions as Collision[]) : [];

  const startNew = () => {
    setEditing(null);
    setSlug('');
    setName('');
    setMode('direct');
    setTools(EXAMPLE_TOOLS);
    setSaved(undefined);
  };

  const edit = (toolset: Toolset) => {
    setEditing(toolset.slug);
    setSlug(toolset.slug);
    setName(toolset.name);
    setMode(toolset.mode);
    setTools(JSON.stringify(toolset.tools, null, 2));
    setSaved(undefined);
  };

  const save = action.submit(async () => {
    setSaved(undefined);
    let entries: unknown;
    try {
      entries = JSON.parse(tools);
    } catch (e) {
      throw new Error(`Tools are not valid JSON: ${asError(e).message}`, { cause: e });
    }
    // The entries go as written; the service checks each one against the project's tools and names what is wrong.
    const body = { slug, name, mode, tools: entries as Schemas['ToolsetBodyDto']['tools'] };
    const result = editing
      ? await call(api.PUT('/v1/projects/{projectId}/toolsets/{slug}', { params: { path: { ...path, slug: editing } }, body }))
      : await call(api.POST('/v1/projects/{projectId}/toolsets', { params: { path }, body }));
    setSaved(result);
    setEditing(result.slug);
    toolsets.reload();
  });

  const remove = (target: string) =>
    listAction.run(async () => {
      await call(api.DELETE('/v1/projects/{projectId}/toolsets/{slug}', { params: { path: { ...path, slug: target } } }));
      if (editing === target) startNew();
      toolsets.reload();
    });

  return (
    <>
      <section class="card" aria-labelledby="toolsets-h">
        <h2 id="toolsets-h">Toolsets</h2>
        <p class="hint">
          A toolset is what an agent sees of this project's tools: chosen, renamed, described for it, with arguments fixed or paths
          confined, served directly or behind search_tools and call_tool.
        </p>
        <ErrorNote error={toolsets.error ?? listAction.error} />
        {toolsets.data && toolsets.data.items.length === 0 ? <p>No toolsets yet.</p> : null}
        {toolsets.data && toolsets.data.items.length > 0 ? (
          <Table
            caption="Toolsets of this project"
            captionHidden
            columns={['Slug', 'Name', 'Mode', 'Tools the model can call', 'Updated']}
            actions
          >
            {toolsets.data.items.map((t) => (
              <tr key={t.slug} class="toolset-row">
                <td>
                  <code>{t.slug}</code>
                </td>
                <td>{t.name}</td>
                <td>{t.mode}</td>
                <td class="exposed-tools">{t.exposedTools.join(', ') || '—'}</td>
                <td>{formatTime(t.updatedAt)}</td>
                <td class="actions">
                  <button type="button" class="secondary" aria-label={`Edit toolset ${t.slug}`} onClick={() => edit(t)}>
                    Edit
                  </button>{' '}
                  <button type="button" class="secondary" aria-label={`Delete toolset ${t.slug}`} onClick={() => void remove(t.slug)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
      </section>
      <section class="card" aria-labelledby="toolset-form-h">
        <h2 id="toolset-form-h">{editing ? `Edit toolset ${editing}` : 'New toolset'}</h2>
        <form onSubmit={save}>
          <Field id="toolset-slug" label="Slug" hint="Lowercase letters, digits and dashes; part of the toolset's URLs">
            <input
              id="toolset-slug"
              value={slug}
              required
              aria-describedby="toolset-slug-hint"
              onInput={(e) => setSlug(e.currentTarget.value)}
            />
          </Field>
          <Field id="toolset-name" label="Name">
            <input id="toolset-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field id="toolset-mode" label="Mode" hint="direct: the model sees the tools; search: it sees search_tools and call_tool">
            <select
              id="toolset-mode"
              value={mode}
              aria-describedby="toolset-mode-hint"
              onChange={(e) => setMode(e.currentTarget.value as Mode)}
            >
              <option value="direct">direct</option>
              <option value="search">search</option>
            </select>
          </Field>
          <Field
            id="toolset-tools"
            label="Tools (JSON)"
            hint="Entries: select (a tool, a name ending in *, or @commands, @writes, @network, @all); for a single tool also name, title, description, fixedArguments, pathPrefix"
          >
            <textarea
              id="toolset-tools"
              class="code"
              rows={12}
              spellcheck={false}
              value={tools}
              aria-describedby="toolset-tools-hint"
              onInput={(e) => setTools(e.currentTarget.value)}
            />
          </Field>
          <ErrorNote error={error} label="Not saved" />
          {collisions.length > 0 ? (
            <div class="note error">
              <p>Tool names that collide:</p>
              <ul class="collisions">
                {collisions.map((c) => (
                  <li key={c.tool + c.conflictsWith}>
                    <code>{c.tool}</code> is already {c.conflictsWith}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {saved ? (
            <div class="note ok" role="status">
              Saved <code>{saved.slug}</code>: the model can call {saved.exposedTools.join(', ') || 'nothing yet'}. Its MCP endpoint is{' '}
              <code>{`${window.location.origin}/v1/projects/${props.projectId}/toolsets/${saved.slug}/mcp`}</code>.
            </div>
          ) : null}
          <div class="row">
            <button type="submit" disabled={action.busy}>
              {editing ? 'Save toolset' : 'Create toolset'}
            </button>
            {editing ? (
              <button type="button" class="secondary" onClick={startNew}>
                New toolset
              </button>
            ) : null}
          </div>
        </form>
      </section>
    </>
  );
}
