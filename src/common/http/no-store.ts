import { applyDecorators, Header } from '@nestjs/common';

// An answer that carries a secret shown once (a new API key, a skill's signing secret) must not be kept by
// a browser's or a proxy's cache, where it would outlive the page that showed it.
export const NoStore = () => applyDecorators(Header('Cache-Control', 'no-store'));

// The header as the OpenAPI document describes it, for the answer's `headers`.
export const NO_STORE_HEADER = {
  'Cache-Control': {
    description: 'no-store: the secret in this answer is kept by no cache',
    schema: { type: 'string', enum: ['no-store'] },
  },
};
