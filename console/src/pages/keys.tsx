import { useState } from 'preact/hooks';
import { api, call, type Session } from '../api/client';
import { ErrorNote, Field, ShownOnce, useAction, useLoad } from '../ui';
import { ApiKeyTable } from './api-key-table';
import { KeyGrantFields, NO_GRANT, grantBody, type KeyGrant } from './key-grant';

// A key is tg_<prefix>_<secret>; the listing shows the prefix, which tells the console which key is its own.
const prefixOf = (key: string): string | undefined => /^tg_([^_]+)_/.exec(key)?.[1];

export function KeysPage(props: { session: Session; signOut: (reason?: string) => void }) {
  const keys = useLoad(() => call(api.GET('/v1/api-keys')), []);
  // The projects a new agent or approver key can be bound to, and the names the table shows.
  const projects = useLoad(() => call(api.GET('/v1/projects', { params: { query: { limit: 100 } } })), []);
  const own = prefixOf(props.session.token);
  const [name, setName] = useState('');
  const [grant, setGrant] = useState<KeyGrant>(NO_GRANT);
  const [issued, setIssued] = useState<{ name: string; role: string; key: string }>();
  const action = useAction();
  const projectName = (id: string) => projects.data?.items.find((p) => p.id === id)?.name;

  const create = action.submit(async () => {
    setIssued(undefined);
    const key = await call(api.POST('/v1/api-keys', { body: grantBody(name, grant) }));
    setIssued({ name: key.name, role: key.role, key: key.key });
    setName('');
    setGrant(NO_GRANT);
    keys.reload();
  });

  const revoke = async (keyId: string, isOwn: boolean) => {
    if (isOwn && !window.confirm('This is the key you signed in with. Revoke it and sign out?')) return;
    await action.run(async () => {
      await call(api.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId } } }));
      if (isOwn) props.signOut('You revoked the key you were signed in with.');
      else keys.reload();
    });
  };

  return (
    <>
      <h1>API keys</h1>
      <section class="card" aria-labelledby="new-key">
        <h2 id="new-key">New key</h2>
        <form class="row" onSubmit={create}>
          <Field id="key-name" label="Key name">
            <input id="key-name" value={name} placeholder="default" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <KeyGrantFields idPrefix="key" grant={grant} onChange={setGrant} projects={projects.data?.items ?? []} />
          <button type="submit">Create key</button>
        </form>
        {issued ? (
          <ShownOnce
            label={
              <>
                Key <strong>{issued.name}</strong> ({issued.role}), shown this once
              </>
            }
            secret={issued.key}
          />
        ) : null}
        <p class="hint">
          A key's secret is shown only when it is created. To rotate: create a key, move your clients to it, revoke the old one. Give an
          agent an agent key, and the people who approve its calls approver keys: the key that made a call cannot decide it.
        </p>
      </section>
      <ErrorNote error={keys.error ?? action.error ?? projects.error} />
      {keys.data ? (
        <ApiKeyTable
          caption="Your active API keys"
          captionHidden
          keys={keys.data.items}
          projectName={projectName}
          badge={(key) => (key.prefix === own ? <span class="badge">this session</span> : null)}
          revokeLabel={(key) => `Revoke key ${key.name} (${key.prefix})`}
          revokeClass="danger"
          onRevoke={(key) => void revoke(key.id, key.prefix === own)}
        />
      ) : null}
    </>
  );
}
