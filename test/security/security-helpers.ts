import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { Response } from 'supertest';
import { isSandboxLauncher } from '../support/processes.js';
import type { TestApp, TestTenant } from '../support/test-app.js';

// Shared by the security suites: calling a tool over HTTP, the shape of a refusal, the audit trail,
// snapshots of directories that must stay untouched, and processes found by a marker argument.

export interface AuditRow {
  id: string;
  tool: string;
  status: string;
  event: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  arguments: unknown;
  argumentsTruncated: boolean;
}

export function invoke(
  t: TestApp,
  tenant: TestTenant,
  projectId: string,
  tool: string,
  args: unknown,
  extra: Record<string, unknown> = {},
) {
  return t.http
    .post(`/v1/projects/${projectId}/tools/${tool}/invoke`)
    .set(tenant.auth)
    .send({ arguments: args, ...extra });
}

// Sends the body exactly as written, so keys such as `__proto__` reach the server as text.
export function invokeRaw(t: TestApp, tenant: TestTenant, projectId: string, tool: string, json: string) {
  return t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth).set('content-type', 'application/json').send(json);
}

// A refusal: a 4xx in the one error shape, with a stable code and a message a model can act on
// (a sentence, no stack trace, no host descriptor paths), and the request id of the answer.
export function expectRefusal(res: Response, status: number | readonly number[], code: string | RegExp): { code: string; message: string } {
  const statuses = typeof status === 'number' ? [status] : status;
  const summary = `${res.status} ${JSON.stringify(res.body).slice(0, 400)}`;
  expect({ status: statuses.includes(res.status), summary }).toEqual({ status: true, summary });
  expect(res.body).toEqual({
    error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
    requestId: expect.any(String),
  });
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  const { code: actual, message } = res.body.error as { code: string; message: string };
  if (typeof code === 'string') expect(actual).toBe(code);
  else expect(actual).toMatch(code);
  expect(message.length).toBeGreaterThan(20);
  expect(message).not.toMatch(/\n\s+at |\/proc\/self\/fd|\[object Object\]/);
  return { code: actual, message };
}

const AUDIT_READ_TIMEOUT_MS = 10_000;

// The invocation log of one project, read over HTTP. Tests in a file run one after another, so the rows
// that appeared since the previous look belong to the calls made in between.
export class AuditTrail {
  private readonly seen = new Set<string>();

  constructor(
    private readonly t: TestApp,
    private readonly tenant: TestTenant,
    private readonly projectId: string,
  ) {}

  async rows(status?: string): Promise<AuditRow[]> {
    const rows: AuditRow[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '100', ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) };
      let res: Response;
      try {
        res = await this.t.http
          .get(`/v1/projects/${this.projectId}/invocations`)
          .query(query)
          .set(this.tenant.auth)
          .timeout(AUDIT_READ_TIMEOUT_MS);
      } catch (error) {
        throw new Error(`GET /v1/projects/:projectId/invocations did not answer within ${AUDIT_READ_TIMEOUT_MS} ms (${String(error)})`);
      }
      expect(res.status).toBe(200);
      rows.push(...(res.body.items as AuditRow[]));
      cursor = res.body.nextCursor as string | null;
    } while (cursor);
    return rows;
  }

  // Rows of this status written since the last call of `fresh` (of any status).
  async fresh(status: string): Promise<AuditRow[]> {
    const rows = (await this.rows(status)).filter((r) => !this.seen.has(r.id));
    rows.forEach((r) => this.seen.add(r.id));
    return rows;
  }

  // Expects the refused calls to be in the log: one new row per expected (tool, code). Rows written in one batch
  // share their timestamp, so the order among them is not the order of the calls: compared as a multiset.
  async expectRows(
    status: 'denied' | 'invalid_arguments',
    expected: ReadonlyArray<{ tool: string; errorCode: string }>,
  ): Promise<AuditRow[]> {
    const rows = await this.fresh(status);
    const key = (r: { tool: string; errorCode: string | null }) => `${r.tool} ${status} ${r.errorCode}`;
    expect(rows.map(key).sort()).toEqual(expected.map(key).sort());
    return rows;
  }

  // Marks everything written so far as seen (after calls that were not refusals).
  async skip(): Promise<void> {
    for (const row of await this.rows()) this.seen.add(row.id);
  }
}

export interface EntrySnapshot {
  path: string;
  type: string;
  size: number;
  mtimeMs: number;
  content?: string;
}

// Every entry below `dir` (symlinks not followed), with file contents: compare two of them to show that
// nothing was created, changed or removed.
export async function snapshot(dir: string, options: { depth?: number } = {}): Promise<EntrySnapshot[]> {
  const depth = options.depth ?? 16;
  const out: EntrySnapshot[] = [];
  const walk = async (current: string, level: number) => {
    for (const name of (await readdir(current)).sort()) {
      const full = path.join(current, name);
      const stat = await lstat(full);
      const rel = path.relative(dir, full);
      if (stat.isSymbolicLink()) {
        out.push({ path: rel, type: 'symlink', size: 0, mtimeMs: 0, content: await readlink(full) });
      } else if (stat.isDirectory()) {
        out.push({ path: rel, type: 'directory', size: 0, mtimeMs: 0 });
        if (level < depth) await walk(full, level + 1);
      } else if (stat.isFile()) {
        out.push({ path: rel, type: 'file', size: stat.size, mtimeMs: stat.mtimeMs, content: (await readFile(full)).toString('base64') });
      } else {
        out.push({ path: rel, type: 'other', size: 0, mtimeMs: stat.mtimeMs });
      }
    }
  };
  await walk(dir, 1);
  return out;
}

// Warnings of the audit writer about rows it could not write (it retries them; a row the database can never
// take holds back every row behind it).
export async function auditWriteFailures(t: TestApp, settleMs = 500): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return t.logs.filter((l) => /audit batch .* not written/.test(String(l.msg))).map((l) => String(l.msg).slice(0, 300));
}

// Pids of live processes whose command line contains `marker` (pgrep answers 1 when there are none).
export function pidsMatching(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => pid !== process.pid && !isZombie(pid) && !isSandboxLauncher(argv0Of(pid)));
  } catch {
    return [];
  }
}

function argv0Of(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

// Ends, one pid at a time, whatever a test started and left behind (found by its unique marker).
export function killMatching(marker: string): void {
  for (const pid of pidsMatching(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
