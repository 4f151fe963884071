import type { CreateApiKey, KeyRole, Project } from '../api/client';
import { Field, listToText, textToList } from '../ui';

// What a new key may do, as the form holds it: projects and tools as the comma-separated text the fields
// show (the project checkboxes write the same text).
export interface KeyGrant {
  role: KeyRole;
  projects: string;
  tools: string;
  // A datetime-local value (the browser's time zone), or empty for a key that does not expire.
  expiresAt: string;
}

export const NO_GRANT: KeyGrant = { role: 'admin', projects: '', tools: '', expiresAt: '' };

const ROLE_OPTIONS: Array<{ role: KeyRole; label: string }> = [
  { role: 'admin', label: 'admin: the whole tenant' },
  { role: 'agent', label: 'agent: calls its tools' },
  { role: 'approver', label: 'approver: decides calls' },
];

// The body of POST /v1/api-keys (or the operator's route): only what the role takes, so that the service's
// invalid_key_grant answers a real mistake, not a field left over from another role.
export function grantBody(name: string, grant: KeyGrant): CreateApiKey {
  const projectIds = textToList(grant.projects);
  const tools = textToList(grant.tools);
  return {
    ...(name.trim() && { name: name.trim() }),
    role: grant.role,
    ...(grant.role !== 'admin' && projectIds.length > 0 && { projectIds }),
    ...(grant.role === 'agent' && tools.length > 0 && { tools }),
    ...(grant.expiresAt && { expiresAt: new Date(grant.expiresAt).toISOString() }),
  };
}

// The role, projects, tools and expiry fields of a new key. With `projects` the tenant picks among its own;
// without (the operator, who has no listing of a tenant's projects), project ids are typed.
export function KeyGrantFields(props: {
  idPrefix: string;
  grant: KeyGrant;
  onChange: (grant: KeyGrant) => void;
  projects?: readonly Project[];
}) {
  const { idPrefix, grant } = props;
  const set = (change: Partial<KeyGrant>) => props.onChange({ ...grant, ...change });
  const chosen = textToList(grant.projects);
  const projectsHint = grant.role === 'agent' ? 'At least one: the key reaches only these projects.' : 'None: every project of the tenant.';
  const toggle = (id: string, on: boolean) => set({ projects: listToText(on ? [...chosen, id] : chosen.filter((c) => c !== id)) });

  return (
    <>
      <Field id={`${idPrefix}-role`} label="Role">
        <select id={`${idPrefix}-role`} value={grant.role} onChange={(e) => set({ role: e.currentTarget.value as KeyRole })}>
          {ROLE_OPTIONS.map((option) => (
            <option key={option.role} value={option.role}>
              {option.label}
            </option>
          ))}
        </select>
      </Field>
      {grant.role !== 'admin' && props.projects ? (
        <fieldset class="field" aria-describedby={`${idPrefix}-projects-hint`}>
          <legend>Projects</legend>
          {props.projects.length === 0 ? <p class="hint">This tenant has no projects yet.</p> : null}
          {props.projects.map((project) => (
            <label key={project.id} class="inline">
              <input type="checkbox" checked={chosen.includes(project.id)} onChange={(e) => toggle(project.id, e.currentTarget.checked)} />{' '}
              {project.name}
            </label>
          ))}
          <p class="hint" id={`${idPrefix}-projects-hint`}>
            {projectsHint}
          </p>
        </fieldset>
      ) : null}
      {grant.role !== 'admin' && !props.projects ? (
        <Field id={`${idPrefix}-projects`} label="Project ids" hint={`Ids of this tenant's projects, separated by commas. ${projectsHint}`}>
          <input
            id={`${idPrefix}-projects`}
            value={grant.projects}
            spellcheck={false}
            aria-describedby={`${idPrefix}-projects-hint`}
            onInput={(e) => set({ projects: e.currentTarget.value })}
          />
        </Field>
      ) : null}
      {grant.role === 'agent' ? (
        <Field
          id={`${idPrefix}-tools`}
          label="Tools"
          hint="Separated by commas; * may end a name (github_*). Empty: every tool of its projects."
        >
          <input
            id={`${idPrefix}-tools`}
            value={grant.tools}
            placeholder="read_file, github_*"
            aria-describedby={`${idPrefix}-tools-hint`}
            onInput={(e) => set({ tools: e.currentTarget.value })}
          />
        </Field>
      ) : null}
      <Field id={`${idPrefix}-expires`} label="Expires" hint="In this browser's time zone; empty: never.">
        <input
          id={`${idPrefix}-expires`}
          type="datetime-local"
          value={grant.expiresAt}
          aria-describedby={`${idPrefix}-expires-hint`}
          onInput={(e) => set({ expiresAt: e.currentTarget.value })}
        />
      </Field>
    </>
  );
}
