import { useState } from 'preact/hooks';
import { api, call, type Project } from '../api/client';
import { NotForRole, may, useRole, type Capability } from '../roles';
import { Link } from '../router';
import { ErrorNote, Field, listToText, textToList, useAction, useLoad } from '../ui';
import { ApprovalRoutesSection } from './approval-routes';
import { ApprovalsTab } from './approvals';
import { InvocationsTab } from './invocations';
import { ProjectSkillsTab } from './project-skills';
import { ToolsTab } from './tools';
import { ToolsetsTab } from './toolsets';

// In this order; a key sees the tabs its role may use, and lands on the first of them.
const TABS: Array<{ id: string; label: string; needs?: Capability }> = [
  { id: 'settings', label: 'Settings', needs: 'manage' },
  { id: 'approvals', label: 'Approvals', needs: 'decide' },
  { id: 'tools', label: 'Tools' },
  { id: 'skills', label: 'Skills', needs: 'manage' },
  { id: 'toolsets', label: 'Toolsets', needs: 'manage' },
  { id: 'log', label: 'Invocation log' },
];

export function ProjectPage(props: { projectId: string; tab?: string }) {
  const role = useRole();
  const project = useLoad(
    () => call(api.GET('/v1/projects/{projectId}', { params: { path: { projectId: props.projectId } } })),
    [props.projectId],
  );
  const tabs = TABS.filter((tab) => !tab.needs || may(role, tab.needs));
  const current = TABS.find((tab) => tab.id === props.tab) ?? tabs[0]!;
  return (
    <>
      <p class="crumbs">
        <Link to="/projects">Projects</Link> /
      </p>
      <h1>{project.data?.name ?? 'Project'}</h1>
      <ErrorNote error={project.error} />
      <nav aria-label="Project sections" class="tabs">
        <ul>
          {tabs.map((tab) => (
            <li key={tab.id}>
              <Link to={`/projects/${props.projectId}/${tab.id}`} current={current.id === tab.id}>
                {tab.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {current.needs && !may(role, current.needs) ? (
        <NotForRole role={role} what={`The ${current.label} tab`} needs={current.needs} />
      ) : project.data ? (
        <Tab project={project.data} tab={current.id} onSaved={project.reload} />
      ) : null}
    </>
  );
}

function Tab(props: { project: Project; tab: string; onSaved: () => void }) {
  const role = useRole();
  switch (props.tab) {
    case 'tools':
      return <ToolsTab projectId={props.project.id} />;
    case 'skills':
      return <ProjectSkillsTab projectId={props.project.id} />;
    case 'toolsets':
      return <ToolsetsTab projectId={props.project.id} />;
    case 'log':
      return <InvocationsTab projectId={props.project.id} />;
    case 'approvals':
      // Where parked calls are announced is the admin's to set; an approver sees the queue only.
      return (
        <>
          <ApprovalsTab projectId={props.project.id} />
          {may(role, 'manage') ? <ApprovalRoutesSection projectId={props.project.id} /> : null}
        </>
      );
    default:
      return <SettingsTab project={props.project} onSaved={props.onSaved} />;
  }
}

function SettingsTab(props: { project: Project; onSaved: () => void }) {
  const p = props.project;
  const [name, setName] = useState(p.name);
  const [workspacePath, setWorkspacePath] = useState(p.workspacePath ?? '');
  const [shellEnabled, setShellEnabled] = useState(p.shellEnabled);
  const [allowlist, setAllowlist] = useState(listToText(p.shellAllowlist));
  const [approval, setApproval] = useState(listToText(p.approvalRequired));
  const [saved, setSaved] = useState(false);
  const saving = useAction();

  const save = saving.submit(async () => {
    setSaved(false);
    await call(
      api.PATCH('/v1/projects/{projectId}', {
        params: { path: { projectId: p.id } },
        body: {
          name,
          // Sent only when changed: a workspace the operator placed shows as empty here and must stay put.
          ...(workspacePath.trim() !== (p.workspacePath ?? '') && {
            workspacePath: workspacePath.trim() === '' ? null : workspacePath.trim(),
          }),
          shellEnabled,
          shellAllowlist: textToList(allowlist),
          approvalRequired: textToList(approval),
        },
      }),
    );
    setSaved(true);
    props.onSaved();
  });

  return (
    <section class="card" aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <p class="hint">
        Slug <code>{p.slug}</code> · id <code>{p.id}</code>
      </p>
      <form onSubmit={save}>
        <Field id="set-name" label="Name">
          <input id="set-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field
          id="set-workspace"
          label="Workspace path"
          hint="An existing directory inside a root the operator granted this tenant; empty: the project's own directory (or the one the operator placed it in)"
        >
          <input
            id="set-workspace"
            value={workspacePath}
            aria-describedby="set-workspace-hint"
            onInput={(e) => setWorkspacePath(e.currentTarget.value)}
          />
        </Field>
        <div class="field">
          <label class="inline">
            <input type="checkbox" checked={shellEnabled} onChange={(e) => setShellEnabled(e.currentTarget.checked)} /> Allow shell_exec
          </label>
        </div>
        <Field
          id="set-allowlist"
          label="Shell allowlist"
          hint="Executables shell_exec may run, separated by commas: bare names on PATH or absolute paths"
        >
          <input
            id="set-allowlist"
            value={allowlist}
            aria-describedby="set-allowlist-hint"
            onInput={(e) => setAllowlist(e.currentTarget.value)}
          />
        </Field>
        <Field
          id="set-approval"
          label="Tools that need approval"
          hint="Calls of these wait for a person (202 pending_approval), separated by commas: tool names, names ending in * (github_*), or the classes @commands (runs a command), @writes (can change files or run one), @network (reaches the network) and @all"
        >
          <input
            id="set-approval"
            value={approval}
            aria-describedby="set-approval-hint"
            onInput={(e) => setApproval(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={saving.error} label="Not saved" />
        {saved ? (
          <p class="note ok" role="status">
            Saved.
          </p>
        ) : null}
        <button type="submit">Save settings</button>
      </form>
    </section>
  );
}
