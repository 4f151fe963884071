import { useRef, useState } from 'preact/hooks';
import { api, ApiError, call, type Schemas } from '../api/client';
import { may, useRole } from '../roles';
import { ErrorNote, formatTime, useAction, useLoad } from '../ui';
import { PolicyCheckForm } from './policy-check';

type PolicySet = Schemas['PolicyResponseDto'];

// As the service answers a refused set in details.problems: Cedar's words and, when it has one, where.
interface Problem {
  message: string;
  help: string | null;
  policyId: string | null;
  position: { start: number; end: number; line: number; column: number } | null;
}

// The tenant's policy set, then one project's: each is read by admin and approver keys and changed by admin
// keys only; a project's calls are decided by both sets together.
export function PoliciesPage() {
  const projects = useLoad(() => call(api.GET('/v1/projects', { params: { query: { limit: 100 } } })), []);
  const [chosen, setChosen] = useState<string>();
  const projectId = chosen ?? projects.data?.items[0]?.id;
  return (
    <>
      <h1>Policies</h1>
      <p class="hint">
        Cedar policies decide every call before it runs: a <code>forbid</code> refuses it, a <code>permit</code> annotated <code>@ask</code>{' '}
        has a person approve it, and a call no policy matches runs as before. The tenant's set applies to every project, beside the
        project's own.
      </p>
      <PolicySetEditor key="tenant" scope="tenant" />
      <section class="card" aria-labelledby="policy-project-h">
        <h2 id="policy-project-h">A project's policies</h2>
        <ErrorNote error={projects.error} />
        {projects.data && projects.data.items.length === 0 ? <p>No projects yet.</p> : null}
        {projects.data && projects.data.items.length > 0 ? (
          <div class="field">
            <label for="policy-project">Project</label>
            <select id="policy-project" value={projectId} onChange={(e) => setChosen(e.currentTarget.value)}>
              {projects.data.items.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({p.slug})
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </section>
      {projectId ? (
        <>
          <PolicySetEditor key={projectId} scope="project" projectId={projectId} />
          <PolicyCheckForm key={`check-${projectId}`} projectId={projectId} />
        </>
      ) : null}
      <SchemaNote />
    </>
  );
}

function PolicySetEditor(props: { scope: 'tenant' | 'project'; projectId?: string }) {
  const projectId = props.projectId;
  const loaded = useLoad(
    () =>
      projectId ? call(api.GET('/v1/projects/{projectId}/policies', { params: { path: { projectId } } })) : call(api.GET('/v1/policies')),
    [projectId],
  );
  const save = (text: string): Promise<PolicySet> =>
    projectId
      ? call(api.PUT('/v1/projects/{projectId}/policies', { params: { path: { projectId } }, body: { text } }))
      : call(api.PUT('/v1/policies', { body: { text } }));
  const id = `policy-${props.scope}`;
  return (
    <section class="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{props.scope === 'tenant' ? "The tenant's policies" : "This project's policies"}</h2>
      <ErrorNote error={loaded.error} />
      {loaded.data ? <PolicyForm id={id} initial={loaded.data} save={save} /> : null}
    </section>
  );
}

function PolicyForm(props: { id: string; initial: PolicySet; save: (text: string) => Promise<PolicySet> }) {
  const canEdit = may(useRole(), 'manage');
  const [record, setRecord] = useState(props.initial);
  const [text, setText] = useState(props.initial.text);
  const [saved, setSaved] = useState(false);
  const saving = useAction();
  const area = useRef<HTMLTextAreaElement>(null);

  const refused = saving.error instanceof ApiError && saving.error.code === 'policy_invalid' ? saving.error : undefined;
  const problems = Array.isArray(refused?.details?.problems) ? (refused.details.problems as Problem[]) : [];

  // The text stays as typed when the service refuses it: only a saved set replaces what the form holds.
  const submit = saving.submit(async () => {
    setSaved(false);
    const next = await props.save(text);
    setRecord(next);
    setText(next.text);
    setSaved(true);
  });

  // Puts the caret where Cedar points, so the problem can be fixed where it is.
  const show = (position: NonNullable<Problem['position']>) => {
    const lines = text.split('\n');
    const offset = lines.slice(0, position.line - 1).reduce((sum, line) => sum + line.length + 1, 0) + position.column - 1;
    area.current?.focus();
    area.current?.setSelectionRange(offset, offset + Math.max(0, position.end - position.start));
  };

  const areaId = `${props.id}-text`;
  return (
    <form onSubmit={submit}>
      <p class="hint" data-testid={`${props.id}-version`}>
        {record.version === 0
          ? 'No policies set yet (version 0).'
          : `Version ${record.version}, set by ${record.setBy ? (record.setBy.name ?? record.setBy.keyId) : 'an earlier key'} on ${formatTime(record.updatedAt)}.`}
      </p>
      <div class="field">
        <label for={areaId}>Policy set (Cedar)</label>
        <textarea
          id={areaId}
          ref={area}
          class="code"
          rows={12}
          spellcheck={false}
          readOnly={!canEdit}
          value={text}
          aria-invalid={problems.length > 0 ? true : undefined}
          aria-describedby={problems.length > 0 ? `${props.id}-problems` : `${props.id}-hint`}
          onInput={(e) => {
            setText(e.currentTarget.value);
            setSaved(false);
          }}
        />
        {problems.length > 0 ? (
          <div class="note error policy-problems" id={`${props.id}-problems`} role="alert">
            <p>
              <strong>Not saved:</strong> Cedar refused this set (<code>policy_invalid</code>); the set in force is unchanged.
            </p>
            <ul>
              {problems.map((p, i) => (
                <li key={i}>
                  {p.position ? (
                    <button type="button" class="link" onClick={() => show(p.position!)}>
                      line {p.position.line}, column {p.position.column}
                    </button>
                  ) : null}
                  {p.position ? ': ' : null}
                  {p.message}
                  {p.help ? <span class="hint"> ({p.help})</span> : null}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        <p class="hint" id={`${props.id}-hint`}>
          {canEdit
            ? 'Empty text clears the set. Give each policy an @id and a @reason: a refused call names them.'
            : 'Only admin keys change policies.'}
        </p>
      </div>
      {refused ? null : <ErrorNote error={saving.error} label="Not saved" />}
      {saved ? (
        <p class="note ok" role="status">
          Saved, version {record.version}.
        </p>
      ) : null}
      {canEdit ? (
        <button type="submit" disabled={saving.busy}>
          Save policies
        </button>
      ) : null}
    </form>
  );
}

// The schema policies are written against, for reference while writing them.
function SchemaNote() {
  const schema = useLoad(() => call(api.GET('/v1/policies/schema')), []);
  if (!schema.data) return <ErrorNote error={schema.error} />;
  return (
    <details class="card">
      <summary>
        The schema policies are read against (namespace <code>{schema.data.namespace}</code>, Cedar {schema.data.cedarVersion})
      </summary>
      <pre>{schema.data.text}</pre>
    </details>
  );
}
