import { AppError, notFound } from './app-error.js';

describe('AppError', () => {
  it('carries status, code and message', () => {
    const e = notFound('project_not_found', 'no such project');
    expect(e).toBeInstanceOf(AppError);
    expect([e.status, e.code, e.message]).toEqual([404, 'project_not_found', 'no such project']);
  });
});
