import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { legacyTask, modernTask, parseCursor, type TaskState } from './mcp-task-shapes.js';
import type { TaskWithCall } from './mcp-tasks.repository.js';

const createdAt = new Date('2026-11-26T10:00:00.000Z');
const task = {
  id: 'task-1',
  createdAt,
  updatedAt: createdAt,
  expiresAt: new Date(createdAt.getTime() + 3_600_000),
} as TaskWithCall;
const denied: TaskState = {
  phase: 'done',
  result: { isError: true, content: [{ type: 'text', text: 'A person denied this call.' }] },
  updatedAt: createdAt,
};

describe('how a task is written under each revision', () => {
  it('counts an error result as a failed task under 2025-11-25 and a completed one, result inline, under 2026-07-28', () => {
    expect(legacyTask(task, denied)).toEqual({
      taskId: 'task-1',
      status: 'failed',
      createdAt: createdAt.toISOString(),
      lastUpdatedAt: createdAt.toISOString(),
      ttl: 3_600_000,
    });
    expect(modernTask(task, denied)).toMatchObject({ status: 'completed', ttlMs: 3_600_000, result: denied.result });
  });

  it('suggests a poll interval only while the task works, and inlines no result then', () => {
    const working: TaskState = { phase: 'working', message: 'Awaits approval', updatedAt: createdAt };
    expect(legacyTask(task, working)).toMatchObject({ status: 'working', statusMessage: 'Awaits approval', pollInterval: 2_000 });
    const modern = modernTask(task, working);
    expect(modern).toMatchObject({ status: 'working', pollIntervalMs: 2_000 });
    expect(modern).not.toHaveProperty('result');
    expect(modernTask(task, { phase: 'cancelled', updatedAt: createdAt })).not.toHaveProperty('pollIntervalMs');
  });

  it('reads back the cursor it writes and refuses anything else as invalid params', () => {
    const cursor = Buffer.from(`${createdAt.toISOString()}|task-1`).toString('base64url');
    expect(parseCursor(cursor)).toEqual({ createdAt, id: 'task-1' });
    for (const bad of [
      3,
      'x'.repeat(201),
      Buffer.from('not-a-date|id').toString('base64url'),
      Buffer.from(`${createdAt.toISOString()}|a|b`).toString('base64url'),
    ]) {
      expect(() => parseCursor(bad)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidParams }));
    }
  });
});
