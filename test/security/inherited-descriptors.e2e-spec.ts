import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { describeSandboxed } from '../support/sandbox.js';
import { migratedPgliteUrl } from '../support/test-database.js';

// docs/security-model.md, case 108 (descriptors): a descriptor the service inherited from its launcher, open
// across exec, reached every command's sandbox (bubblewrap passes on what it inherits). The compiled
// service is started here by a shell that leaves a file open at descriptor 50, and a command in a sandbox
// lists its own descriptors.
const root = fileURLToPath(new URL('../..', import.meta.url));
const main = path.join(root, 'dist/main.js');
const ADMIN_TOKEN = 'descriptors-admin-token-0123456789';
const INHERITED_FD = 50;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

describeSandboxed('[sec-108] descriptors the service inherited', () => {
  let dir: string;
  let child: ChildProcess;
  let output = '';
  let base: string;

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` before these tests');
    dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-fds-'));
    // The sandbox's uid must pass through to the workspaces.
    await chmod(dir, 0o711);
    const port = await freePort();
    // A launcher that leaves a file open: the shell's redirection is open across its exec of the service.
    child = spawn('/bin/bash', ['-c', `exec ${INHERITED_FD}</etc/hostname; exec "$0" "$1"`, process.execPath, main], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: await migratedPgliteUrl(path.join(dir, 'db')),
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_TOKEN,
        WORKSPACE_ROOT: path.join(dir, 'workspaces'),
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const deadline = Date.now() + 30_000;
    while (!output.includes('Toolgate is listening')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the service did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    base = `http://127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('closes them at start-up, so no command sees one', async () => {
    const closed = output.split('\n').find((line) => line.includes('Closed descriptors inherited from the launcher'));
    expect(JSON.parse(closed ?? '{}')).toMatchObject({ descriptors: expect.arrayContaining([INHERITED_FD]) });
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const tenant = (await request(base).post('/v1/admin/tenants').set(admin).send({ name: 'fds' }).expect(201)).body as { id: string };
    const key = (await request(base).post(`/v1/admin/tenants/${tenant.id}/api-keys`).set(admin).send({}).expect(201)).body as {
      key: string;
    };
    const auth = { Authorization: `Bearer ${key.key}` };
    const project = (
      await request(base)
        .post('/v1/projects')
        .set(auth)
        .send({ name: 'p', slug: 'p', shellEnabled: true, shellAllowlist: ['ls'] })
        .expect(201)
    ).body as { id: string };
    const res = await request(base)
      .post(`/v1/projects/${project.id}/tools/shell_exec/invoke`)
      .set(auth)
      .send({ arguments: { argv: ['ls', '/proc/self/fd'] } });
    expect(res.body).toMatchObject({ status: 'ok', result: { exitCode: 0 } });
    // stdin, stdout, stderr, and the directory ls is reading.
    const open = (res.body.result.stdout as string).split('\n').filter(Boolean).map(Number);
    expect(open.sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
  }, 60_000);
});
