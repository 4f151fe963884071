import { AsyncLocalStorage } from 'node:async_hooks';

// Carries the request id to every log line written while a request is handled.
export interface RequestContext {
  requestId: string;
  tenantId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export const currentRequestId = (): string | undefined => requestContext.getStore()?.requestId;
