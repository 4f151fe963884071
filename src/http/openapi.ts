import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_SECURITY, TENANT_SECURITY } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';
import { forEachSchema, toJsonSchema2020 } from './openapi-dialect.js';

const ERROR_REF = { $ref: '#/components/schemas/ErrorResponseDto' };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// The license and version the package declares (package.json sits two levels above dist/http and src/http).
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; license: string };

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Toolgate')
    .setDescription(
      'Tool-execution gateway for LLM agents. Tenant routes take `Authorization: Bearer tg_<prefix>_<secret>`; ' +
        'admin routes take the ADMIN_TOKEN. Every error has the shape `{ error: { code, message, details? }, requestId }`.',
    )
    .setVersion(pkg.version)
    .addServer('/', 'The instance serving this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A tenant API key: tg_<prefix>_<secret>' }, TENANT_SECURITY)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN from the environment' }, ADMIN_SECURITY)
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorResponseDto] });
  return finishDocument(document);
}

// What holds for every route by construction rather than by decorator: the 3.1 schema dialect, the explicit
// empty security of public routes, the 400 of the validation pipe and body parser, and the one error shape
// of the global filter for any status a route does not list (500 internal_error, 413, 415 ...).
function finishDocument(document: OpenAPIObject): OpenAPIObject {
  // package.json's license; UNLICENSED has neither an SPDX identifier nor a URL to give.
  document.info.license = { name: pkg.license };
  delete document.info.contact;
  forEachSchema(document, toJsonSchema2020);
  for (const pathItem of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (pathItem as Record<string, OperationLike | undefined>)[method];
      if (!operation) continue;
      // Public() declares the empty requirement {}; [] is the plain spelling of "no credentials".
      if (operation.security?.length === 1 && Object.keys(operation.security[0]).length === 0) operation.security = [];
      const takesInput = operation.requestBody !== undefined || (operation.parameters ?? []).some((p) => p.in === 'query');
      if (takesInput && !operation.responses['400']) {
        operation.responses['400'] = {
          description: 'validation_failed (details.fields), invalid_json',
          content: { 'application/json': { schema: ERROR_REF } },
        };
      }
      operation.responses.default ??= {
        description: 'Any other error, in the one error shape (e.g. 500 internal_error, 413 payload_too_large)',
        content: { 'application/json': { schema: ERROR_REF } },
      };
    }
  }
  return document;
}

interface OperationLike {
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string }>;
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

// The document at /openapi.json and the interactive docs at /docs. Anyone may read them, without a key: the
// document is written as JSON once, at its first request, with an ETag (a 304 while it is current), instead
// of 238 KB made into JSON per request (an outsider's flood of them took another tenant's p99 40x). Both take
// their turns in the share of requests without a known key (http/early-refusals.ts).
export function setupOpenApi(app: INestApplication): void {
  let document: OpenAPIObject | undefined;
  const built = () => (document ??= buildOpenApiDocument(app));
  SwaggerModule.setup('docs', app, built, { raw: [] });
  let json: { bytes: Buffer; etag: string } | undefined;
  type Reply = { type(value: string): Reply; header(name: string, value: string): Reply; send(body: Buffer): unknown };
  app.getHttpAdapter().get('/openapi.json', (_request: unknown, reply: Reply) => {
    if (!json) {
      const bytes = Buffer.from(JSON.stringify(built()));
      json = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
    }
    return reply.type('application/json; charset=utf-8').header('etag', json.etag).header('cache-control', 'no-cache').send(json.bytes);
  });
}
