import { useState } from 'preact/hooks';
import { api, ApiError, call } from '../api/client';
import { Link } from '../router';
import { ErrorNote, Field, formatTime, useAction, useLoad } from '../ui';

interface Collision {
  tool: string;
  // 'builtin', 'skill:<name>@<version>', or 'toolset:<slug>' with the tool it shows under the name (renamed)
  conflictsWith: string;
  renamed?: string;
}

const TOOLSET = 'toolset:';

function Holder(props: { collision: Collision }) {
  const { conflictsWith, renamed } = props.collision;
  if (conflictsWith === 'builtin') return <>provided by the built-in tools</>;
  if (conflictsWith.startsWith(TOOLSET)) {
    return (
      <>
        the name toolset <code>{conflictsWith.slice(TOOLSET.length)}</code> shows <code>{renamed}</code> under (rename it there to free the
        name)
      </>
    );
  }
  return (
    <>
      provided by <code>{conflictsWith}</code>
    </>
  );
}

export function ProjectSkillsTab(props: { projectId: string }) {
  const path = { projectId: props.projectId };
  const enabled = useLoad(() => call(api.GET('/v1/projects/{projectId}/skills', { params: { path } })), [props.projectId]);
  const all = useLoad(() => call(api.GET('/v1/skills', { params: { query: { limit: 100 } } })), []);
  const [skillId, setSkillId] = useState('');
  const action = useAction();

  const enabledIds = new Set(enabled.data?.items.map((s) => s.id));
  const candidates = all.data?.items.filter((s) => !enabledIds.has(s.id)) ?? [];
  const error = action.error;
  const collisions = error instanceof ApiError && Array.isArray(error.details?.collisions) ? (error.details.collisions as Collision[]) : [];

  const enable = action.submit(async () => {
    const chosen = skillId || candidates[0]?.id;
    if (!chosen) return;
    await call(api.POST('/v1/projects/{projectId}/skills', { params: { path }, body: { skillId: chosen } }));
    setSkillId('');
    enabled.reload();
  });

  const disable = (id: string) =>
    action.run(async () => {
      await call(api.DELETE('/v1/projects/{projectId}/skills/{skillId}', { params: { path: { ...path, skillId: id } } }));
      enabled.reload();
    });

  return (
    <section class="card" aria-labelledby="pskills-h">
      <h2 id="pskills-h">Skills on this project</h2>
      <ErrorNote error={enabled.error ?? all.error} />
      {all.data && candidates.length === 0 ? (
        <p class="hint">
          Every registered skill is enabled here. <Link to="/skills">Register a skill</Link>.
        </p>
      ) : (
        <form class="row" onSubmit={enable}>
          <Field id="enable-skill" label="Skill to enable">
            <select id="enable-skill" value={skillId} onChange={(e) => setSkillId(e.currentTarget.value)}>
              {candidates.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}@{s.version}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit">Enable skill</button>
        </form>
      )}
      <ErrorNote error={error} label="Not enabled" />
      {collisions.length > 0 ? (
        <div class="note error">
          <p>Tool names that collide:</p>
          <ul class="collisions">
            {collisions.map((c) => (
              <li key={c.tool}>
                <code>{c.tool}</code> is already <Holder collision={c} />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {enabled.data && enabled.data.items.length === 0 ? <p>No skills enabled.</p> : null}
      <ul class="plain">
        {enabled.data?.items.map((s) => (
          <li key={s.id} class="enabled-skill">
            <code>
              {s.name}@{s.version}
            </code>{' '}
            <span class="hint">
              {(s.tools as Array<{ name?: string }>).map((t) => t.name).join(', ')} · updated {formatTime(s.updatedAt)}
            </span>{' '}
            <button type="button" class="secondary" aria-label={`Disable skill ${s.name}`} onClick={() => void disable(s.id)}>
              Disable
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
