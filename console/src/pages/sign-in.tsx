import { useState } from 'preact/hooks';
import { api, call, probeRole, saveSession, type Session } from '../api/client';
import { ErrorNote, Field, useAction } from '../ui';

// Checks the key or token with one call before keeping it: for a tenant key, the call that also tells its
// role (probeRole); the tenant list for an operator.
async function verify(kind: Session['kind'], token: string): Promise<Session> {
  if (kind === 'tenant') return { kind, token, role: await probeRole(token) };
  await call(api.GET('/v1/admin/tenants', { headers: { Authorization: `Bearer ${token}`, 'X-Console-Sign-In': '1' } }));
  return { kind, token };
}

export function SignInPage(props: { reason?: string; onSignedIn: (session: Session) => void }) {
  const [kind, setKind] = useState<Session['kind']>('tenant');
  const [token, setToken] = useState('');
  const signing = useAction();

  const submit = signing.submit(async () => {
    const session = await verify(kind, token.trim());
    saveSession(session);
    props.onSignedIn(session);
  });

  return (
    <main id="main" class="sign-in">
      <h1>Toolgate console</h1>
      {props.reason ? (
        <div class="note" role="status">
          {props.reason}
        </div>
      ) : null}
      <form onSubmit={submit} class="card">
        <fieldset>
          <legend>Sign in as</legend>
          <label class="inline">
            <input type="radio" name="kind" value="tenant" checked={kind === 'tenant'} onChange={() => setKind('tenant')} /> a tenant (API
            key)
          </label>
          <label class="inline">
            <input type="radio" name="kind" value="admin" checked={kind === 'admin'} onChange={() => setKind('admin')} /> the operator
            (admin token)
          </label>
        </fieldset>
        <Field
          id="token"
          label={kind === 'tenant' ? 'API key' : 'Admin token'}
          hint="Kept in this tab's session storage only; closing the tab signs you out."
        >
          <input
            id="token"
            type="password"
            autoComplete="off"
            required
            value={token}
            aria-describedby="token-hint"
            placeholder={kind === 'tenant' ? 'tg_…' : ''}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={signing.error} label="Sign-in failed" />
        <button type="submit" disabled={signing.busy}>
          {signing.busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
