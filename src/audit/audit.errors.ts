import { AppError, badRequest, notFound } from '../common/errors/app-error.js';

export const invocationNotFound = (invocationId: string) =>
  notFound('invocation_not_found', `No invocation with id '${invocationId}' in this project`);

export const invalidExportWindow = () => badRequest('invalid_window', "'since' must be earlier than 'until'");

export const tooManyExports = (max: number) =>
  new AppError(
    429,
    'too_many_exports',
    `This tenant already has ${max} audit exports in progress on this instance (AUDIT_EXPORTS_PER_TENANT); let one finish before starting another`,
    { headers: { 'Retry-After': '5' }, details: { limit: max } },
  );
