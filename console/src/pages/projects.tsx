import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { may, useRole } from '../roles';
import { Link, navigate } from '../router';
import { ErrorNote, Field, Table, formatTime, useAction, useLoad } from '../ui';

export function ProjectsPage() {
  // An agent or approver key bound to some projects sees only those.
  const projects = useLoad(() => call(api.GET('/v1/projects', { params: { query: { limit: 100 } } })), []);
  const mayCreate = may(useRole(), 'manage');

  return (
    <>
      <h1>Projects</h1>
      {mayCreate ? <NewProject /> : null}
      <ErrorNote error={projects.error} />
      {projects.data ? (
        projects.data.items.length === 0 ? (
          <p>No projects yet.</p>
        ) : (
          <Table caption="Your projects" captionHidden columns={['Name', 'Slug', 'Shell', 'Created']}>
            {projects.data.items.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link to={`/projects/${p.id}`}>{p.name}</Link>
                </td>
                <td>
                  <code>{p.slug}</code>
                </td>
                <td>{p.shellEnabled ? 'on' : 'off'}</td>
                <td>{formatTime(p.createdAt)}</td>
              </tr>
            ))}
          </Table>
        )
      ) : null}
    </>
  );
}

function NewProject() {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const creating = useAction();

  const create = creating.submit(async () => {
    const project = await call(api.POST('/v1/projects', { body: { name, slug: slug || slugOf(name) } }));
    navigate(`/projects/${project.id}`);
  });

  return (
    <section class="card" aria-labelledby="new-project">
      <h2 id="new-project">New project</h2>
      <form onSubmit={create} class="row">
        <Field id="project-name" label="Name">
          <input id="project-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="project-slug" label="Slug" hint="Lower-case letters, digits and dashes; from the name when empty">
          <input
            id="project-slug"
            value={slug}
            placeholder={slugOf(name)}
            pattern="[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
            aria-describedby="project-slug-hint"
            onInput={(e) => setSlug(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Create project</button>
      </form>
      <ErrorNote error={creating.error} label="Not created" />
    </section>
  );
}

const slugOf = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
