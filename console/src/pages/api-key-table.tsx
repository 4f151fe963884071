import type { ComponentChildren } from 'preact';
import type { ApiKey } from '../api/client';
import { Table, formatTime } from '../ui';

// The keys of one tenant, as the tenant sees its own (keys page) and as the operator sees any tenant's.
export function ApiKeyTable(props: {
  caption: ComponentChildren;
  captionHidden?: boolean;
  keys: readonly ApiKey[];
  // Shown after the key's name (the keys page marks the key of this session).
  badge?: (key: ApiKey) => ComponentChildren;
  // A project's name, where the page knows it (the tenant's own keys page); otherwise its id is shown.
  projectName?: (id: string) => string | undefined;
  revokeLabel: (key: ApiKey) => string;
  revokeClass: 'danger' | 'secondary';
  onRevoke: (key: ApiKey) => void;
}) {
  const now = Date.now();
  return (
    <Table
      caption={props.caption}
      captionHidden={props.captionHidden}
      columns={['Name', 'Role', 'Projects', 'Tools', 'Prefix', 'Created', 'Expires', 'Last used']}
      actions
    >
      {props.keys.map((key) => (
        <tr key={key.id}>
          <td>
            {key.name} {props.badge?.(key)}
          </td>
          <td>{key.role}</td>
          <td>
            {key.projectIds.length === 0
              ? 'all'
              : key.projectIds.map((id, index) => (
                  <span key={id}>
                    {index > 0 ? ', ' : null}
                    {props.projectName?.(id) ?? <code>{id}</code>}
                  </span>
                ))}
          </td>
          {/* Only an agent key is bound to tools; the others reach what their role allows. */}
          <td>{key.role !== 'agent' ? '—' : key.tools.length === 0 ? 'all' : <code>{key.tools.join(', ')}</code>}</td>
          <td>
            <code>tg_{key.prefix}_…</code>
          </td>
          <td>{formatTime(key.createdAt)}</td>
          <td>
            {key.expiresAt ? formatTime(key.expiresAt) : 'never'}
            {key.expiresAt && Date.parse(key.expiresAt) <= now ? (
              <>
                {' '}
                <span class="badge">expired</span>
              </>
            ) : null}
          </td>
          <td>{formatTime(key.lastUsedAt)}</td>
          <td>
            <button type="button" class={props.revokeClass} aria-label={props.revokeLabel(key)} onClick={() => props.onRevoke(key)}>
              Revoke
            </button>
          </td>
        </tr>
      ))}
    </Table>
  );
}
