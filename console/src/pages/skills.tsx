import { useState } from 'preact/hooks';
import { api, call } from '../api/client';
import { Link } from '../router';
import { ErrorNote, Field, ShownOnce, Table, asError, formatTime, useAction, useLoad } from '../ui';

const EXAMPLE_SKILL = JSON.stringify(
  {
    name: 'weather',
    version: '1.0.0',
    description: 'Weather lookups',
    tools: [
      {
        name: 'get_forecast',
        description: 'The forecast for a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        executor: { type: 'http', url: 'https://weather.example.com/forecast' },
      },
    ],
  },
  null,
  2,
);

export function SkillsPage() {
  const skills = useLoad(() => call(api.GET('/v1/skills', { params: { query: { limit: 100 } } })), []);
  const [json, setJson] = useState(EXAMPLE_SKILL);
  const [registered, setRegistered] = useState<{ name: string; version: string; signingSecret?: string }>();
  const action = useAction();

  const register = action.submit(async () => {
    setRegistered(undefined);
    let body: unknown;
    try {
      body = JSON.parse(json);
    } catch (e) {
      throw new Error(`Not valid JSON: ${asError(e).message}`, { cause: e });
    }
    // The body is the skill as the tenant wrote it; the service vets it against the document's schema.
    setRegistered(await call(api.POST('/v1/skills', { body: body as never })));
    skills.reload();
  });

  const remove = (skillId: string) =>
    action.run(async () => {
      await call(api.DELETE('/v1/skills/{skillId}', { params: { path: { skillId } } }));
      skills.reload();
    });

  return (
    <>
      <h1>Skills</h1>
      <section class="card" aria-labelledby="register-h">
        <h2 id="register-h">Register a skill</h2>
        <form onSubmit={register}>
          <Field
            id="skill-json"
            label="Skill (JSON)"
            hint="name, version, description and tools (each with an inputSchema and an http or command executor), or an MCP source"
          >
            <textarea
              id="skill-json"
              class="code"
              rows={16}
              spellcheck={false}
              value={json}
              aria-describedby="skill-json-hint"
              onInput={(e) => setJson(e.currentTarget.value)}
            />
          </Field>
          <ErrorNote error={action.error} label="Not registered" />
          {registered ? (
            <ShownOnce label="Signing secret for its http endpoints (shown once)" secret={registered.signingSecret}>
              Registered{' '}
              <code>
                {registered.name}@{registered.version}
              </code>
              .
            </ShownOnce>
          ) : null}
          <button type="submit">Register skill</button>
        </form>
      </section>
      <ErrorNote error={skills.error} />
      {skills.data ? (
        <Table caption="Registered skills" columns={['Skill', 'Tools', 'Updated']} actions>
          {skills.data.items.map((skill) => (
            <tr key={skill.id}>
              <td>
                <code>
                  {skill.name}@{skill.version}
                </code>
                <div class="hint">{skill.description}</div>
              </td>
              <td>
                {(skill.tools as Array<{ name?: string; withheld?: string }>)
                  .map((t) => (t.withheld ? `${t.name} (withheld)` : t.name))
                  .join(', ')}
                {skill.source ? (
                  <div>
                    <Link to={`/skills/${skill.id}/changes`}>Review changes of {skill.name}</Link>
                  </div>
                ) : null}
              </td>
              <td>{formatTime(skill.updatedAt)}</td>
              <td>
                <button type="button" class="danger" aria-label={`Delete skill ${skill.name}`} onClick={() => void remove(skill.id)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </>
  );
}
