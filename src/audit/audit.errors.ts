import { badRequest, notFound } from '../common/errors/app-error.js';

export const invocationNotFound = (invocationId: string) => notFound('invocation_not_found', `No invocation with id '${invocationId}' in this project`);

export const invalidExportWindow = () => badRequest('invalid_window', "'since' must be earlier than 'until'");
