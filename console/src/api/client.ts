// The one typed client: paths and schemas come from the service's OpenAPI document (schema.d.ts is generated
// from the document scripts/openapi-document.mjs writes, during `npm run build`), calls go through openapi-fetch.
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type Project = Schemas['ProjectResponseDto'];
export type Tool = Schemas['ToolDto'];
export type Invocation = Schemas['InvocationResponseDto'];
export type Skill = Schemas['SkillResponseDto'];
export type ApiKey = Schemas['ApiKeyResponseDto'];
export type Tenant = Schemas['TenantResponseDto'];
export type InvocationStatus = Invocation['status'];
export type KeyRole = ApiKey['role'];
export type CreateApiKey = Schemas['CreateApiKeyDto'];
export type Decision = Schemas['DecisionResponseDto'];
export type AuthProvider = Schemas['AuthProviderResponseDto'];
export type Connection = Schemas['ConnectionResponseDto'];

const KEY_ROLES: readonly KeyRole[] = ['admin', 'agent', 'approver'];
export const isKeyRole = (value: unknown): value is KeyRole => KEY_ROLES.includes(value as KeyRole);

export interface Session {
  kind: 'tenant' | 'admin';
  token: string;
  // A tenant key's role, learnt at sign-in (a session kept before roles existed learns it on load).
  role?: KeyRole;
}

// The key or token lives in this tab's session storage only: closing the tab signs out.
const SESSION_KEY = 'toolgate.console.session';

export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Session;
    if ((parsed.kind !== 'tenant' && parsed.kind !== 'admin') || typeof parsed.token !== 'string') return null;
    return { kind: parsed.kind, token: parsed.token, ...(isKeyRole(parsed.role) && { role: parsed.role }) };
  } catch {
    return null;
  }
}

export const saveSession = (session: Session): void => sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
export const clearSession = (): void => sessionStorage.removeItem(SESSION_KEY);

// Set by the app: a 401 on any call means the key was revoked, expired (api_key_expired) or is wrong, so the
// console signs out, with the code of the answer to say which.
let unauthorized: ((code?: string) => void) | undefined;
export const onUnauthorized = (handler: (code?: string) => void): void => {
  unauthorized = handler;
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use({
  onRequest({ request }) {
    const session = loadSession();
    if (session && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${session.token}`);
    return request;
  },
  onResponse({ request, response }) {
    // A sign-in attempt carries its own header and handles its own 401.
    if (response.status === 401 && !request.headers.has('X-Console-Sign-In')) {
      // A copy is read, so the page that made the call still gets the answer's body.
      void response
        .clone()
        .json()
        .then(
          (body: { error?: { code?: string } }) => unauthorized?.(body.error?.code),
          () => unauthorized?.(),
        );
    }
    return response;
  },
});

// Every error of the service has one shape: { error: { code, message, details? }, requestId }.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export function toApiError(error: unknown, response: Response): ApiError {
  const body = (error ?? {}) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } };
  return new ApiError(
    response.status,
    body.error?.code ?? `http_${response.status}`,
    body.error?.message ?? response.statusText,
    body.error?.details,
  );
}

// The data of a successful answer, or an ApiError carrying the service's code and message.
export async function call<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok || error !== undefined) throw toApiError(error, response);
  return data as T;
}

// The role of a tenant key, with no route of its own: GET /v1/api-keys is for admin keys only, and any other
// key is refused with 403 forbidden_for_role, whose details name the key's role. A 401 (unknown, revoked or
// expired key) is thrown, like any other failure.
export async function probeRole(token: string): Promise<KeyRole> {
  const headers = { Authorization: `Bearer ${token}`, 'X-Console-Sign-In': '1' };
  try {
    await call(api.GET('/v1/api-keys', { headers }));
    return 'admin';
  } catch (error) {
    if (error instanceof ApiError && error.code === 'forbidden_for_role' && isKeyRole(error.details?.role)) return error.details.role;
    throw error;
  }
}
