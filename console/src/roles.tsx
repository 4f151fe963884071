import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { KeyRole } from './api/client';

// What each part of the console needs, as the service's routes declare it (x-toolgate-roles in the OpenAPI
// document; a route that names no roles is admin-only). The service decides: this only keeps the console
// from offering what would answer 403 forbidden_for_role.
const NEEDS = {
  // Keys, skills, project settings, creating projects.
  manage: ['admin'],
  // Invoke a tool (Try it).
  invoke: ['admin', 'agent'],
  // Approve or deny a parked call.
  decide: ['admin', 'approver'],
  // Read the policy sets and ask what they decide of a call (changing them is manage).
  policies: ['admin', 'approver'],
} as const satisfies Record<string, readonly KeyRole[]>;

export type Capability = keyof typeof NEEDS;

export const may = (role: KeyRole, what: Capability): boolean => (NEEDS[what] as readonly KeyRole[]).includes(role);

// The signed-in key's role; the operator's pages never read it.
export const RoleContext = createContext<KeyRole>('admin');
export const useRole = (): KeyRole => useContext(RoleContext);

export const ROLE_LABEL: Record<KeyRole, string> = {
  admin: 'admin key',
  agent: 'agent key',
  approver: 'approver key',
};

// A page the key's role may not use, reached by its address: said plainly instead of a page of 403s.
export function NotForRole(props: { role: KeyRole; what: string; needs: Capability }) {
  return (
    <div class="note error" role="alert">
      <strong>Not available to an {ROLE_LABEL[props.role]}:</strong> {props.what} takes{' '}
      {NEEDS[props.needs].map((r) => `an ${ROLE_LABEL[r]}`).join(' or ')}.
    </div>
  );
}
