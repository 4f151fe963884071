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
  revokeLabel: (key: ApiKey) => string;
  revokeClass: 'danger' | 'secondary';
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    <Table caption={props.caption} captionHidden={props.captionHidden} columns={['Name', 'Prefix', 'Created', 'Last used']} actions>
      {props.keys.map((key) => (
        <tr key={key.id}>
          <td>
            {key.name} {props.badge?.(key)}
          </td>
          <td>
            <code>tg_{key.prefix}_…</code>
          </td>
          <td>{formatTime(key.createdAt)}</td>
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
