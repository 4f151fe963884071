import { useState } from 'preact/hooks';
import { api, call, type KeyRole, type Schemas } from '../api/client';
import { ErrorNote, Field, Table, asError, useAction } from '../ui';

type Check = Schemas['PolicyCheckResponseDto'];

const EXAMPLE_ARGUMENTS = JSON.stringify({ path: 'notes.txt', content: 'hello' }, null, 2);

// What the policies in force decide of a call, without running or recording it: the tool, its arguments,
// and optionally the role and key name to decide as (else the signed-in key's).
export function PolicyCheckForm(props: { projectId: string }) {
  const [tool, setTool] = useState('write_file');
  const [args, setArgs] = useState(EXAMPLE_ARGUMENTS);
  const [asRole, setAsRole] = useState<KeyRole | ''>('');
  const [asName, setAsName] = useState('');
  const [result, setResult] = useState<Check>();
  const checking = useAction();

  const submit = checking.submit(async () => {
    setResult(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args.trim() === '' ? '{}' : args);
    } catch (e) {
      throw new Error(`The arguments are not valid JSON: ${asError(e).message}`, { cause: e });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('The arguments must be a JSON object.');
    const as = { ...(asRole && { role: asRole }), ...(asName.trim() && { keyName: asName.trim() }) };
    setResult(
      await call(
        api.POST('/v1/projects/{projectId}/policies/check', {
          params: { path: { projectId: props.projectId } },
          body: { tool: tool.trim(), arguments: parsed as Record<string, unknown>, ...(Object.keys(as).length > 0 && { as }) },
        }),
      ),
    );
  });

  return (
    <section class="card" aria-labelledby="policy-check-h">
      <h2 id="policy-check-h">Try a call</h2>
      <p class="hint">Asks what the tenant's and this project's policies decide of a call. Nothing runs and nothing is recorded.</p>
      <form onSubmit={submit}>
        <div class="row">
          <Field id="check-tool" label="Tool">
            <input id="check-tool" required value={tool} onInput={(e) => setTool(e.currentTarget.value)} />
          </Field>
          <Field id="check-role" label="As role">
            <select id="check-role" value={asRole} onChange={(e) => setAsRole(e.currentTarget.value as KeyRole | '')}>
              <option value="">this key's</option>
              <option value="admin">admin</option>
              <option value="agent">agent</option>
              <option value="approver">approver</option>
            </select>
          </Field>
          <Field id="check-name" label="As key name">
            <input id="check-name" placeholder="this key's" value={asName} onInput={(e) => setAsName(e.currentTarget.value)} />
          </Field>
        </div>
        <Field id="check-arguments" label="Arguments (JSON)" hint="As the tool takes them; they are checked against its input schema">
          <textarea
            id="check-arguments"
            class="code"
            rows={6}
            spellcheck={false}
            value={args}
            aria-describedby="check-arguments-hint"
            onInput={(e) => setArgs(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={checking.error} label="Not decided" />
        <button type="submit" disabled={checking.busy}>
          Check the call
        </button>
      </form>
      {result ? <CheckResult result={result} /> : null}
    </section>
  );
}

function CheckResult(props: { result: Check }) {
  const { result } = props;
  return (
    <div class={`answer ${result.decision === 'forbid' ? 'refused' : 'ok'}`} data-testid="policy-decision" role="status">
      <p>
        Decision <strong class="decision">{result.decision}</strong>
        {result.wouldPark ? ': the call would wait for a person' : null}
        {result.policyInForce ? null : ' (no policy is in force for this project)'}
      </p>
      {result.policies.length > 0 ? (
        <Table caption="Determining policies" columns={['Id', 'Scope', 'Reason']}>
          {result.policies.map((p) => (
            <tr key={`${p.scope}-${p.id}`} class="determining-policy">
              <td>
                <code>{p.id}</code>
              </td>
              <td>{p.scope}</td>
              <td>{p.reason ?? '—'}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </div>
  );
}
