import { AppError, notFound } from './app-error.js';

describe('AppError', () => {
  it('carries status, code and message', () => {
    const e = notFound('project_not_found', 'no such project');
    expect(e).toBeInstanceOf(AppError);
    expect([e.status, e.code, e.message]).toEqual([404, 'project_not_found', 'no such project']);
  });
});

describe('AppError stacks', () => {
  const frames = (e: Error) => (e.stack ?? '').split('\n').filter((line) => line.trim().startsWith('at ')).length;

  it('captures no stack for a refusal, keeps one for a server error, and leaves the limit as it was', () => {
    const limit = Error.stackTraceLimit;
    expect(frames(notFound('project_not_found', 'no such project'))).toBe(0);
    expect(frames(new AppError(503, 'database_unavailable', 'down'))).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(frames(new Error('plain'))).toBeGreaterThan(0);
  });
});
