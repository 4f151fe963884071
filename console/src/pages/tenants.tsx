import { useState } from 'preact/hooks';
import { api, call, type Tenant } from '../api/client';
import { ErrorNote, Field, ShownOnce, formatTime, useAction, useLoad } from '../ui';
import { ApiKeyTable } from './api-key-table';
import { KeyGrantFields, NO_GRANT, grantBody, type KeyGrant } from './key-grant';

export function TenantsPage() {
  const tenants = useLoad(() => call(api.GET('/v1/admin/tenants')), []);
  const [name, setName] = useState('');
  const creating = useAction();

  const create = creating.submit(async () => {
    await call(api.POST('/v1/admin/tenants', { body: { name } }));
    setName('');
    tenants.reload();
  });

  return (
    <>
      <h1>Tenants</h1>
      <section class="card" aria-labelledby="new-tenant">
        <h2 id="new-tenant">New tenant</h2>
        <form class="row" onSubmit={create}>
          <Field id="tenant-name" label="Name">
            <input id="tenant-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <button type="submit">Create tenant</button>
        </form>
        <ErrorNote error={creating.error} label="Not created" />
      </section>
      <ErrorNote error={tenants.error} />
      <ul class="plain">
        {tenants.data?.items.map((tenant) => (
          <TenantCard key={tenant.id} tenant={tenant} onDeleted={tenants.reload} />
        ))}
      </ul>
    </>
  );
}

function TenantCard(props: { tenant: Tenant; onDeleted: () => void }) {
  const { tenant } = props;
  const path = { tenantId: tenant.id };
  const keys = useLoad(() => call(api.GET('/v1/admin/tenants/{tenantId}/api-keys', { params: { path } })), [tenant.id]);
  const [keyName, setKeyName] = useState('');
  const [grant, setGrant] = useState<KeyGrant>(NO_GRANT);
  const [issued, setIssued] = useState<{ id: string; role: string; key: string }>();
  const action = useAction();

  const issue = action.submit(async () => {
    const key = await call(api.POST('/v1/admin/tenants/{tenantId}/api-keys', { params: { path }, body: grantBody(keyName, grant) }));
    setIssued({ id: key.id, role: key.role, key: key.key });
    setKeyName('');
    setGrant(NO_GRANT);
    keys.reload();
  });

  const revoke = (keyId: string) =>
    action.run(async () => {
      await call(api.DELETE('/v1/admin/tenants/{tenantId}/api-keys/{keyId}', { params: { path: { ...path, keyId } } }));
      keys.reload();
    });

  const remove = async () => {
    if (!window.confirm(`Delete tenant ${tenant.name} with its projects, skills and keys?`)) return;
    await action.run(async () => {
      await call(api.DELETE('/v1/admin/tenants/{tenantId}', { params: { path } }));
      props.onDeleted();
    });
  };

  return (
    <li class="card" aria-labelledby={`tenant-${tenant.id}`}>
      <div class="tool-head">
        <h2 id={`tenant-${tenant.id}`}>{tenant.name}</h2>
        <span class="hint">
          <code>{tenant.id}</code> · created {formatTime(tenant.createdAt)}
        </span>
        <button type="button" class="danger" onClick={() => void remove()} aria-label={`Delete tenant ${tenant.name}`}>
          Delete
        </button>
      </div>
      <ErrorNote error={keys.error ?? action.error} />
      <ApiKeyTable
        caption={`API keys of ${tenant.name}`}
        keys={keys.data?.items ?? []}
        revokeLabel={(key) => `Revoke key ${key.name} (${key.prefix}) of ${tenant.name}`}
        revokeClass="secondary"
        onRevoke={(key) => void revoke(key.id)}
      />
      <form class="row" onSubmit={issue}>
        <Field id={`key-name-${tenant.id}`} label="New key's name">
          <input id={`key-name-${tenant.id}`} value={keyName} placeholder="default" onInput={(e) => setKeyName(e.currentTarget.value)} />
        </Field>
        <KeyGrantFields idPrefix={`key-${tenant.id}`} grant={grant} onChange={setGrant} />
        <button type="submit">Issue key</button>
      </form>
      {issued ? <ShownOnce label={`Key, ${issued.role} (shown once)`} secret={issued.key} /> : null}
    </li>
  );
}
