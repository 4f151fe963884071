import { api, call, type Schemas } from '../api/client';
import { Link } from '../router';
import { ErrorNote, Table, formatTime, useAction, useLoad } from '../ui';

type Change = Schemas['SkillChangeDto'];

const shown = (value: unknown): string => (value === undefined ? '—' : JSON.stringify(value));

// The review of an MCP skill's pinned definitions: what its server answers now that differs from what was
// reviewed (or a first import the description rules flagged), with the diff and the flags, to accept or reject.
export function SkillChangesPage(props: { skillId: string }) {
  const { skillId } = props;
  const path = { skillId };
  const skill = useLoad(() => call(api.GET('/v1/skills/{skillId}', { params: { path } })), [skillId]);
  const changes = useLoad(() => call(api.GET('/v1/skills/{skillId}/changes', { params: { path } })), [skillId]);
  const action = useAction();

  const refresh = () =>
    action.run(async () => {
      await call(api.POST('/v1/skills/{skillId}/refresh', { params: { path } }));
      changes.reload();
      skill.reload();
    });
  const decide = (change: Change, verdict: 'accept' | 'reject') =>
    action.run(async () => {
      const params = { params: { path: { skillId, changeId: change.id } } };
      await call(
        verdict === 'accept'
          ? api.POST('/v1/skills/{skillId}/changes/{changeId}/accept', params)
          : api.POST('/v1/skills/{skillId}/changes/{changeId}/reject', params),
      );
      changes.reload();
      skill.reload();
    });

  return (
    <>
      <p>
        <Link to="/skills">← Skills</Link>
      </p>
      <h1>Pending changes{skill.data ? ` of ${skill.data.name}` : ''}</h1>
      <p class="hint">
        The definitions served are the ones reviewed. A changed definition waits here; a tool whose input schema changed incompatibly, or
        whose description the rules flagged at import, is withheld until you decide.
      </p>
      <button type="button" onClick={() => void refresh()}>
        Check the server now
      </button>
      <ErrorNote error={action.error ?? changes.error ?? skill.error} />
      {changes.data && changes.data.items.length === 0 ? <p role="status">No pending changes.</p> : null}
      {changes.data && changes.data.items.length > 0 ? (
        <Table caption="Changes waiting for review" columns={['Tool', 'What changed', 'Flags', 'Detected']} actions>
          {changes.data.items.map((change) => (
            <tr key={change.id}>
              <td>
                <code>{change.tool}</code>
                <div class="hint">
                  {change.kind}
                  {change.incompatible ? ' · incompatible: withheld' : ''}
                </div>
              </td>
              <td>
                <ul class="diff">
                  {change.diff.map((entry) => (
                    <li key={entry.path}>
                      <code>{entry.path}</code>: <del>{shown(entry.before)}</del> → <ins>{shown(entry.after)}</ins>
                    </li>
                  ))}
                </ul>
              </td>
              <td>
                {change.flags.length === 0 ? '—' : null}
                <ul>
                  {change.flags.map((flag) => (
                    <li key={`${flag.rule}${flag.field}`}>
                      <strong>{flag.rule}</strong> in <code>{flag.field}</code>: <q>{flag.excerpt}</q>
                    </li>
                  ))}
                </ul>
              </td>
              <td>{formatTime(change.detectedAt)}</td>
              <td>
                <button type="button" aria-label={`Accept the change of ${change.tool}`} onClick={() => void decide(change, 'accept')}>
                  Accept
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  aria-label={`Reject the change of ${change.tool}`}
                  onClick={() => void decide(change, 'reject')}
                >
                  Reject
                </button>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
