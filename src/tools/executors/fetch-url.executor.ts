import { Inject, Injectable } from '@nestjs/common';
import { BUILTIN_OUTPUTS } from './builtin-outputs.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { FairTurns } from '../../common/scheduling/fair-turns.js';
import { safeFetch, type FetchMethod } from '../../execution/net/safe-fetch.js';
import type { ToolContext, ToolDefinition, ToolExecutor } from '../../execution/tool-definition.js';
import { FETCH_TOOL_TIMEOUT_MS } from '../tools.config.js';

interface FetchUrlArgs {
  url: string;
  method?: FetchMethod;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 100 * 1024;
const MAX_REDIRECTS = 5;

@Injectable()
export class FetchUrlExecutor implements ToolExecutor<FetchUrlArgs> {
  readonly definition: ToolDefinition;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly turns: FairTurns,
  ) {
    this.definition = {
      name: 'fetch_url',
      ...BUILTIN_OUTPUTS.fetch_url,
      description:
        'Fetch an http(s) URL and return its status, headers and body (capped, marked truncated). Private, loopback and cloud-metadata addresses are refused, on every redirect too (at most 5).',
      inputSchema: {
        type: 'object',
        properties: {
          url: {
            type: 'string',
            format: 'uri',
            pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
            maxLength: 8192,
            description: 'An http:// or https:// URL',
          },
          method: { type: 'string', enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], description: 'Default GET' },
          headers: {
            type: 'object',
            additionalProperties: { type: 'string', maxLength: 8192 },
            maxProperties: 64,
            description: 'Request headers',
          },
          body: { type: 'string', maxLength: 1048576, description: 'Request body (not with GET or HEAD)' },
          timeoutMs: { type: 'integer', minimum: 100, maximum: FETCH_TOOL_TIMEOUT_MS, description: `Default ${FETCH_TOOL_TIMEOUT_MS}` },
          maxBytes: {
            type: 'integer',
            minimum: 1,
            maximum: config.tools.fetch.maxBytesLimit,
            description: `Most response bytes to return (default ${DEFAULT_MAX_BYTES})`,
          },
        },
        required: ['url'],
        additionalProperties: false,
      },
      // Not read-only: it sends POST, PUT, PATCH and DELETE too, and clients auto-approve read-only tools.
      annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
      timeoutMs: FETCH_TOOL_TIMEOUT_MS,
      source: 'builtin',
    };
  }

  execute(args: FetchUrlArgs, ctx: ToolContext) {
    return safeFetch(
      {
        url: args.url,
        method: args.method ?? 'GET',
        headers: args.headers,
        body: args.body,
        timeoutMs: Math.min(args.timeoutMs ?? FETCH_TOOL_TIMEOUT_MS, ctx.timeoutMs),
        maxBytes: args.maxBytes ?? DEFAULT_MAX_BYTES,
        signal: ctx.signal,
      },
      { allowHosts: this.config.tools.fetch.allowHosts, maxRedirects: MAX_REDIRECTS, beforeDecode: () => this.turns.take(ctx.tenantId) },
    );
  }
}
