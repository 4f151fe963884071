import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_SECURITY, TENANT_SECURITY } from '../common/auth/auth.decorators.js';
import { ErrorResponseDto } from '../common/errors/error-response.dto.js';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Toolgate')
    .setDescription(
      'Tool-execution gateway for LLM agents. Tenant routes take `Authorization: Bearer tg_<prefix>_<secret>`; ' +
        'admin routes take the ADMIN_TOKEN. Every error has the shape `{ error: { code, message, details? }, requestId }`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A tenant API key: tg_<prefix>_<secret>' }, TENANT_SECURITY)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN from the environment' }, ADMIN_SECURITY)
    .build();
  return SwaggerModule.createDocument(app, config, { extraModels: [ErrorResponseDto] });
}

// The document at /openapi.json and the interactive docs at /docs.
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
  });
}
