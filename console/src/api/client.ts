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

export interface Session {
  kind: 'tenant' | 'admin';
  token: string;
}

// The key or token lives in this tab's session storage only: closing the tab signs out.
const SESSION_KEY = 'toolgate.console.session';

export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Session;
    return (parsed.kind === 'tenant' || parsed.kind === 'admin') && typeof parsed.token === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

export const saveSession = (session: Session): void => sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
export const clearSession = (): void => sessionStorage.removeItem(SESSION_KEY);

// Set by the app: a 401 on any call means the key was revoked or is wrong, so the console signs out.
let unauthorized: (() => void) | undefined;
export const onUnauthorized = (handler: () => void): void => {
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
    if (response.status === 401 && !request.headers.has('X-Console-Sign-In')) unauthorized?.();
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
  return new ApiError(response.status, body.error?.code ?? `http_${response.status}`, body.error?.message ?? response.statusText, body.error?.details);
}

// The data of a successful answer, or an ApiError carrying the service's code and message.
export async function call<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok || error !== undefined) throw toApiError(error, response);
  return data as T;
}
