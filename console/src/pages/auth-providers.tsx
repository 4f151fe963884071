import { useState } from 'preact/hooks';
import { api, call, type AuthProvider } from '../api/client';
import { ErrorNote, Field, Table, formatTime, listToText, textToList, useAction, useLoad } from '../ui';

// The tenant's auth providers: the OAuth authorization servers its tools act through for its users. The
// client secret is written, never read back: editing leaves it as it is unless a new one is typed.
interface ProviderForm {
  slug: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  apiHosts: string;
  verifyUrl: string;
}

const EMPTY: ProviderForm = { slug: '', name: '', issuer: '', clientId: '', clientSecret: '', scopes: '', apiHosts: '', verifyUrl: '' };

export function AuthProvidersPage() {
  const providers = useLoad(() => call(api.GET('/v1/auth-providers')), []);
  const [form, setForm] = useState<ProviderForm>(EMPTY);
  // The provider being edited; none: the form adds one.
  const [editing, setEditing] = useState<AuthProvider>();
  const action = useAction();
  const set = (change: Partial<ProviderForm>) => setForm({ ...form, ...change });

  const save = action.submit(async () => {
    if (editing) {
      await call(
        api.PATCH('/v1/auth-providers/{providerId}', {
          params: { path: { providerId: editing.id } },
          body: {
            name: form.name,
            clientId: form.clientId,
            scopes: textToList(form.scopes),
            apiHosts: textToList(form.apiHosts),
            verifyUrl: form.verifyUrl.trim() === '' ? null : form.verifyUrl.trim(),
            ...(form.clientSecret !== '' && { clientSecret: form.clientSecret }),
            ...(form.issuer.trim() !== editing.issuer && { issuer: form.issuer.trim() }),
          },
        }),
      );
    } else {
      await call(
        api.POST('/v1/auth-providers', {
          body: {
            slug: form.slug.trim(),
            name: form.name.trim(),
            issuer: form.issuer.trim(),
            clientId: form.clientId.trim(),
            clientSecret: form.clientSecret,
            scopes: textToList(form.scopes),
            apiHosts: textToList(form.apiHosts),
            ...(form.verifyUrl.trim() !== '' && { verifyUrl: form.verifyUrl.trim() }),
          },
        }),
      );
    }
    setEditing(undefined);
    setForm(EMPTY);
    providers.reload();
  });

  const edit = (provider: AuthProvider) => {
    setEditing(provider);
    setForm({
      slug: provider.slug,
      name: provider.name,
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: '',
      scopes: listToText(provider.scopes),
      apiHosts: listToText(provider.apiHosts),
      verifyUrl: provider.verifyUrl ?? '',
    });
  };

  const remove = (provider: AuthProvider) => {
    if (!window.confirm(`Delete ${provider.name}? Every connection to it ends, and its tokens are revoked.`)) return;
    void action.run(async () => {
      await call(api.DELETE('/v1/auth-providers/{providerId}', { params: { path: { providerId: provider.id } } }));
      providers.reload();
    });
  };

  return (
    <>
      <h1>Auth providers</h1>
      <section class="card" aria-labelledby="provider-form">
        <h2 id="provider-form">{editing ? `Edit ${editing.name}` : 'New auth provider'}</h2>
        <form class="row" onSubmit={save}>
          <Field id="provider-slug" label="Slug" hint="What skills name it by (auth.provider).">
            <input
              id="provider-slug"
              value={form.slug}
              required
              disabled={!!editing}
              placeholder="github"
              onInput={(e) => set({ slug: e.currentTarget.value })}
            />
          </Field>
          <Field id="provider-name" label="Name">
            <input
              id="provider-name"
              value={form.name}
              required
              placeholder="GitHub"
              onInput={(e) => set({ name: e.currentTarget.value })}
            />
          </Field>
          <Field id="provider-issuer" label="Issuer" hint="Its endpoints are read from its discovery document.">
            <input
              id="provider-issuer"
              value={form.issuer}
              required
              placeholder="https://accounts.example.com"
              onInput={(e) => set({ issuer: e.currentTarget.value })}
            />
          </Field>
          <Field id="provider-client-id" label="Client id">
            <input id="provider-client-id" value={form.clientId} required onInput={(e) => set({ clientId: e.currentTarget.value })} />
          </Field>
          <Field
            id="provider-client-secret"
            label="Client secret"
            hint={editing ? 'Stored sealed, never shown. Empty: unchanged.' : 'Stored sealed, never shown again.'}
          >
            <input
              id="provider-client-secret"
              type="password"
              autocomplete="off"
              value={form.clientSecret}
              required={!editing}
              onInput={(e) => set({ clientSecret: e.currentTarget.value })}
            />
          </Field>
          <Field id="provider-scopes" label="Scopes" hint="Separated by commas.">
            <input
              id="provider-scopes"
              value={form.scopes}
              placeholder="repo, read:user"
              onInput={(e) => set({ scopes: e.currentTarget.value })}
            />
          </Field>
          <Field id="provider-api-hosts" label="API hosts" hint="The only hosts its tokens are sent to, separated by commas.">
            <input
              id="provider-api-hosts"
              value={form.apiHosts}
              required
              placeholder="api.github.com"
              onInput={(e) => set({ apiHosts: e.currentTarget.value })}
            />
          </Field>
          <Field
            id="provider-verify-url"
            label="Verify URL"
            hint="Your app's page that confirms who connected (POST /v1/connections/verify). Empty: a connection is active at once."
          >
            <input
              id="provider-verify-url"
              value={form.verifyUrl}
              placeholder="https://app.example.com/connections/verify"
              onInput={(e) => set({ verifyUrl: e.currentTarget.value })}
            />
          </Field>
          <button type="submit" disabled={action.busy}>
            {editing ? 'Save provider' : 'Add provider'}
          </button>
          {editing ? (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setEditing(undefined);
                setForm(EMPTY);
              }}
            >
              Cancel
            </button>
          ) : null}
        </form>
      </section>
      <ErrorNote error={providers.error ?? action.error} />
      {providers.data ? (
        <Table
          caption="Auth providers"
          captionHidden
          columns={['Name', 'Slug', 'Issuer', 'API hosts', 'Redirect URI to register', 'Verify URL', 'Updated']}
          actions
        >
          {providers.data.items.map((provider) => (
            <tr key={provider.id}>
              <td>{provider.name}</td>
              <td>
                <code>{provider.slug}</code>
              </td>
              <td>{provider.issuer}</td>
              <td>{listToText(provider.apiHosts)}</td>
              <td>{provider.redirectUri ? <code>{provider.redirectUri}</code> : 'needs PUBLIC_URL'}</td>
              <td>{provider.verifyUrl ?? '—'}</td>
              <td>{formatTime(provider.updatedAt)}</td>
              <td>
                <button type="button" class="secondary" aria-label={`Edit ${provider.name}`} onClick={() => edit(provider)}>
                  Edit
                </button>{' '}
                <button type="button" class="danger" aria-label={`Delete ${provider.name}`} onClick={() => remove(provider)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      {providers.data?.items.length === 0 ? <p class="hint">No auth providers yet.</p> : null}
    </>
  );
}
