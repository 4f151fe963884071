import { useEffect, useState } from 'preact/hooks';
import { api, call, type Connection } from '../api/client';
import { ErrorNote, Field, Table, formatTime, useAction, useLoad } from '../ui';

const PAGE = 50;

// People's connections to the tenant's auth providers (never a token), per user, with revoke; and a link
// for a person, or for the tenant's own connection (a tool with auth.as "tenant"), made here by an admin.
// Listed a page at a time, oldest first, with more on demand.
export function ConnectionsPage() {
  const [user, setUser] = useState('');
  const [shown, setShown] = useState('');
  const connections = usePagedConnections(shown);
  const providers = useLoad(() => call(api.GET('/v1/auth-providers')), []);
  const [linkProvider, setLinkProvider] = useState('');
  const [linkUser, setLinkUser] = useState('');
  const [link, setLink] = useState<{ url: string; expiresAt: string }>();
  const action = useAction();

  const revoke = (connection: Connection) => {
    if (!window.confirm(`Revoke ${connection.user ?? 'the tenant'}'s connection to ${connection.provider}?`)) return;
    void action.run(async () => {
      await call(api.DELETE('/v1/connections/{connectionId}', { params: { path: { connectionId: connection.id } } }));
      connections.reload();
    });
  };

  const makeLink = action.submit(async () => {
    const provider = linkProvider || providers.data?.items[0]?.slug;
    if (!provider) return;
    const made = await call(
      api.POST('/v1/connections/authorize', { body: { provider, ...(linkUser.trim() !== '' && { user: linkUser.trim() }) } }),
    );
    setLink({ url: made.authorizationUrl, expiresAt: made.expiresAt });
    connections.reload();
  });

  return (
    <>
      <h1>Connections</h1>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          setShown(user.trim());
        }}
      >
        <Field id="connections-user" label="User" hint="Empty: every user's connections.">
          <input id="connections-user" value={user} placeholder="alice@example.com" onInput={(e) => setUser(e.currentTarget.value)} />
        </Field>
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={connections.error ?? providers.error ?? action.error} />
      {connections.items.length > 0 ? (
        <Table
          caption={shown === '' ? 'Connections' : `Connections of ${shown}`}
          captionHidden
          columns={['Provider', 'User', 'Status', 'Scopes', 'Created', 'Expires', 'Last used']}
          actions
        >
          {connections.items.map((connection) => (
            <tr key={connection.id}>
              <td>
                <code>{connection.provider}</code>
              </td>
              <td>{connection.user ?? <em>the tenant</em>}</td>
              <td>
                <span class="badge">{connection.status}</span>
              </td>
              <td>{connection.scopes.join(' ')}</td>
              <td>{formatTime(connection.createdAt)}</td>
              <td>{formatTime(connection.expiresAt)}</td>
              <td>{formatTime(connection.lastUsedAt)}</td>
              <td>
                {connection.status === 'revoked' ? null : (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Revoke ${connection.user ?? 'the tenant'}'s connection to ${connection.provider}`}
                    onClick={() => revoke(connection)}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      {connections.more ? (
        <button type="button" class="secondary" disabled={connections.loading} onClick={connections.loadMore}>
          Load more
        </button>
      ) : null}
      {connections.loaded && connections.items.length === 0 ? <p class="hint">No connections.</p> : null}
      <section class="card" aria-labelledby="new-link">
        <h2 id="new-link">Connect an account</h2>
        <form class="row" onSubmit={makeLink}>
          <Field id="link-provider" label="Provider">
            <select id="link-provider" value={linkProvider} onChange={(e) => setLinkProvider(e.currentTarget.value)}>
              {(providers.data?.items ?? []).map((provider) => (
                <option key={provider.id} value={provider.slug}>
                  {provider.name}
                </option>
              ))}
            </select>
          </Field>
          <Field id="link-user" label="For user" hint='Empty: the tenant&apos;s own connection (tools with auth.as "tenant").'>
            <input id="link-user" value={linkUser} onInput={(e) => setLinkUser(e.currentTarget.value)} />
          </Field>
          <button type="submit" disabled={action.busy || !providers.data?.items.length}>
            Create link
          </button>
        </form>
        {link ? (
          <p>
            Open once, before {formatTime(link.expiresAt)}:{' '}
            <a href={link.url} target="_blank" rel="noreferrer noopener">
              authorization link
            </a>
          </p>
        ) : null}
      </section>
    </>
  );
}

// The connections of `user` (every user's when empty), a page at a time: `loadMore` appends the next page,
// `reload` starts again from the first.
function usePagedConnections(user: string) {
  const [items, setItems] = useState<Connection[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [generation, setGeneration] = useState(0);
  const loading = useAction();

  const load = (from: string | null) => async () => {
    const query = { limit: PAGE, ...(user === '' ? {} : { user }), ...(from ? { cursor: from } : {}) };
    const page = await call(api.GET('/v1/connections', { params: { query } }));
    setItems((previous) => (from ? [...previous, ...page.items] : page.items));
    setCursor(page.nextCursor ?? null);
    setLoaded(true);
  };

  useEffect(() => {
    void loading.run(load(null));
  }, [user, generation]);

  return {
    items,
    loaded,
    more: cursor !== null,
    loading: loading.busy,
    error: loading.error,
    loadMore: () => void loading.run(load(cursor)),
    reload: () => setGeneration((n) => n + 1),
  };
}
