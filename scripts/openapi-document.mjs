// Writes the OpenAPI document the service publishes at /openapi.json, from the compiled app (npm run build
// first), without listening or touching a database on disk: `node scripts/openapi-document.mjs [file]`
// (stdout without a file). A client generator takes it from there, e.g.
// `npx openapi-typescript openapi.json -o toolgate-api.ts`.
import { writeFileSync } from 'node:fs';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';

const dist = new URL('../dist/', import.meta.url);
const { AppModule } = await import(new URL('app.module.js', dist).href);
const { loadConfig } = await import(new URL('config/load-config.js', dist).href);
const { createHttpAdapter } = await import(new URL('http/configure-app.js', dist).href);
const { buildOpenApiDocument } = await import(new URL('http/openapi.js', dist).href);

// The document depends on the routes and DTOs only: an in-memory database and a placeholder admin token do.
const config = loadConfig(
  { NODE_ENV: 'test', ADMIN_TOKEN: 'x'.repeat(32), DATABASE_URL: 'pglite://memory', LOG_LEVEL: 'error' },
  process.cwd(),
);
const app = await NestFactory.create(AppModule.forRoot(config), createHttpAdapter(config), { bodyParser: false, logger: false });
const json = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
const file = process.argv[2];
if (file) writeFileSync(file, json);
else process.stdout.write(json);
// The app was never initialised nor listened: nothing to shut down gracefully (app.close() would wait
// on shutdown hooks for seconds for nothing).
process.exit(0);
