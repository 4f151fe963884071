import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { createPinoLogger, JsonLogger } from '../../src/common/logging/json-logger.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../../src/database/database-driver.js';
import { configureApp, createHttpAdapter } from '../../src/http/configure-app.js';
import { sandboxTestEnv } from './sandbox.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestTenant {
  id: string;
  key: string;
  // An admin key of the tenant (named "default") and its id, which the audit names as the caller.
  auth: { Authorization: string };
  keyId: string;
  // An approver key of the same tenant (named "decider"): the key that made a parked call may never decide it.
  deciderAuth: { Authorization: string };
  deciderKeyId: string;
}

export interface TestApp {
  app: INestApplication;
  // Requests to the app's server, which listens on a free port of 127.0.0.1 (`port`) from the start.
  http: ReturnType<typeof request>;
  port: number;
  config: AppConfig;
  database: TestDatabase;
  // Real temporary directory used as WORKSPACE_ROOT (and allowed root) unless the env overrides it.
  tmpDir: string;
  // Every JSON log line the app wrote, parsed.
  logs: Array<Record<string, unknown>>;
  admin: { Authorization: string };
  createTenant(name?: string): Promise<TestTenant>;
  createProject(tenant: TestTenant, body?: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>>;
  // The operator grants the tenant roots inside which its keys may place project workspaces.
  grantWorkspaceRoots(tenant: TestTenant, roots: string[]): Promise<void>;
  // The operator's own budget figures for one tenant (PATCH /v1/admin/tenants/{id}).
  setBudgets(tenant: TestTenant, budgets: Record<string, number | null>): Promise<void>;
  // The directory of a project created under WORKSPACE_ROOT.
  workspaceOf(projectId: string): string;
  close(): Promise<void>;
}

let tenantCounter = 0;

// The driver as an app that did not create the database sees it: the app closes its driver when it shuts
// down, but the database belongs to the app it was borrowed from, which still writes its audit rows there
// (once it was closed under it, that app's shutdown retried them until the 10 s flush deadline).
function borrowed(driver: DatabaseDriver): DatabaseDriver {
  return { ...driver, close: () => Promise.resolve() };
}

// The real Nest app on a real database (PGlite, or PostgreSQL with TEST_DATABASE_URL), real files.
// `port`: listen there (a suite that sets PUBLIC_URL before the app starts); else a free one.
export async function createTestApp(
  options: { env?: Record<string, string>; database?: TestDatabase; port?: number } = {},
): Promise<TestApp> {
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-test-'));
  // Sandboxed commands run as another uid, which must be able to pass through to the workspaces.
  await chmod(tmpDir, 0o711);
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      // The e2e suites run on the adapter CI asks for (HTTP_ADAPTER=fastify), Express otherwise.
      ...(process.env.HTTP_ADAPTER ? { HTTP_ADAPTER: process.env.HTTP_ADAPTER } : {}),
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      // Suites make many calls per tenant; the rate-limit suite sets its own limits.
      RATE_LIMIT_REQUESTS: '1000000',
      RATE_LIMIT_COMMAND_CALLS: '1000000',
      RATE_LIMIT_SIGN_IN: '1000000',
      RATE_LIMIT_AUTH_FAILURES: '1000000',
      WORKSPACE_ROOT: path.join(tmpDir, 'workspaces'),
      ...sandboxTestEnv,
      ...options.env,
    },
    tmpDir,
  );
  const database = options.database ?? (await createTestDatabase());
  try {
    return await startTestApp(config, tmpDir, database, options.database === undefined, options.port ?? 0);
  } catch (error) {
    if (!options.database) await database.close();
    await rm(tmpDir, { recursive: true, force: true });
    throw error;
  }
}

async function startTestApp(
  config: AppConfig,
  tmpDir: string,
  database: TestDatabase,
  ownsDatabase: boolean,
  port: number,
): Promise<TestApp> {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const pinoLogger = createPinoLogger(config.logLevel, sink);
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] })
    .overrideProvider(DATABASE_DRIVER)
    .useValue(ownsDatabase ? database.driver : borrowed(database.driver))
    .compile();
  const app = moduleRef.createNestApplication(await createHttpAdapter(config), { bodyParser: false, logger: new JsonLogger(pinoLogger) });
  configureApp(app, config, pinoLogger);
  await app.init();
  // Fastify routes only once its instance is ready.
  if (config.httpAdapter === 'fastify') await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  // Listening from the start: supertest, given a server that does not listen, makes it listen and closes it
  // again around every request (about a millisecond of CPU each).
  const server = app.getHttpServer() as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const http = request(server);
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  return {
    app,
    http,
    port: (server.address() as AddressInfo).port,
    config,
    database,
    tmpDir,
    logs,
    admin,
    async createTenant(name = `tenant-${process.pid}-${++tenantCounter}`) {
      const tenant = await http.post('/v1/admin/tenants').set(admin).send({ name }).expect(201);
      const key = await http.post(`/v1/admin/tenants/${tenant.body.id}/api-keys`).set(admin).send({}).expect(201);
      const decider = await http
        .post(`/v1/admin/tenants/${tenant.body.id}/api-keys`)
        .set(admin)
        .send({ name: 'decider', role: 'approver' })
        .expect(201);
      return {
        id: tenant.body.id as string,
        key: key.body.key as string,
        auth: { Authorization: `Bearer ${key.body.key}` },
        keyId: key.body.id as string,
        deciderAuth: { Authorization: `Bearer ${decider.body.key}` },
        deciderKeyId: decider.body.id as string,
      };
    },
    async createProject(tenant, body = {}) {
      const slug = `p-${++tenantCounter}`;
      const res = await http
        .post('/v1/projects')
        .set(tenant.auth)
        .send({ name: slug, slug, ...body })
        .expect(201);
      return res.body as { id: string };
    },
    async grantWorkspaceRoots(tenant, roots) {
      await http.patch(`/v1/admin/tenants/${tenant.id}`).set(admin).send({ workspaceRoots: roots }).expect(200);
    },
    async setBudgets(tenant, budgets) {
      await http.patch(`/v1/admin/tenants/${tenant.id}`).set(admin).send({ budgets }).expect(200);
    },
    workspaceOf(projectId) {
      return path.join(config.workspace.root!, projectId);
    },
    async close() {
      await app.close();
      if (ownsDatabase) await database.close();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}
