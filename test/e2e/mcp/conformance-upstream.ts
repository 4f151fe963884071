import { crc32, deflateSync } from 'node:zlib';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { UpstreamMcpServer } from './upstream-mcp-server.js';

// The tools, resources, prompts and completions the MCP conformance suite asks for by name, served by a
// tenant's upstream MCP server: Toolgate imports its tools as an MCP skill and relays them, and relays its
// resources and prompts to keys that may call those tools, so the suite's checks judge what Toolgate
// hands on (content of every kind, progress, errors, schemas) rather than a fixture of Toolgate's own.
// Answers as an event stream, so the progress and log messages a tool sends while it runs travel with its call.

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

// A 1x1 red PNG and 10 ms of silence as 8 kHz mono WAV, built here so the bytes are plainly what they claim.
export const RED_PIXEL_PNG = tinyPng().toString('base64');
export const SILENT_WAV = silentWav(80).toString('base64');

export const SCHEMA_2020_12_TOOL = 'json_schema_2020_12_tool';

export const CONFORMANCE_TOOLS: Tool[] = [
  { name: 'test_simple_text', description: 'Answers one text item', inputSchema: NO_ARGUMENTS },
  { name: 'test_image_content', description: 'Answers a PNG image', inputSchema: NO_ARGUMENTS },
  { name: 'test_audio_content', description: 'Answers a WAV recording', inputSchema: NO_ARGUMENTS },
  { name: 'test_embedded_resource', description: 'Answers an embedded text resource', inputSchema: NO_ARGUMENTS },
  { name: 'test_multiple_content_types', description: 'Answers text, an image and an embedded resource', inputSchema: NO_ARGUMENTS },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50 and 100 of 100 while it runs', inputSchema: NO_ARGUMENTS },
  { name: 'test_tool_with_logging', description: 'Logs three messages at info level while it runs', inputSchema: NO_ARGUMENTS },
  { name: 'test_error_handling', description: 'Always answers an error result', inputSchema: NO_ARGUMENTS },
  {
    name: SCHEMA_2020_12_TOOL,
    description: 'Takes arguments described with JSON Schema 2020-12 keywords',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
];

export const CONFORMANCE_RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', description: 'A static text resource', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', description: 'A static PNG', mimeType: 'image/png' },
];
export const CONFORMANCE_TEMPLATE = 'test://template/{id}/data';

export const CONFORMANCE_PROMPTS: Prompt[] = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  { name: 'test_prompt_with_embedded_resource', description: 'A prompt embedding a resource', arguments: [{ name: 'resourceUri', description: 'The resource to embed', required: true }] },
  { name: 'test_prompt_with_image', description: 'A prompt with an image' },
];

// What arg1 of test_prompt_with_arguments completes to.
export const ARG1_VALUES = ['paris', 'park', 'party', 'test-one', 'test-two'];

export class ConformanceUpstream extends UpstreamMcpServer {
  protected override readonly jsonResponse = false;
  // The progressToken of each call of test_tool_with_progress (undefined: none was sent).
  readonly progressTokens: unknown[] = [];
  // Every resource read, prompt got and completion asked for: `resources/read test://…`, `prompts/get name`, `completion/complete …`.
  readonly requests: string[] = [];

  constructor() {
    super(CONFORMANCE_TOOLS);
  }

  protected override mcpServer(): Server {
    const server = new Server({ name: 'conformance-fixtures', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: CONFORMANCE_RESOURCES }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [{ uriTemplate: CONFORMANCE_TEMPLATE, name: 'template-data', description: 'Data by id', mimeType: 'application/json' }],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => this.read(request.params.uri));
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: CONFORMANCE_PROMPTS }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => this.prompt(request.params.name, request.params.arguments ?? {}));
    server.setRequestHandler(CompleteRequestSchema, (request) => {
      const { ref, argument } = request.params;
      this.requests.push(`completion/complete ${ref.type === 'ref/prompt' ? ref.name : ref.uri} ${argument.name}=${argument.value}`);
      const values = ref.type === 'ref/prompt' && ref.name === 'test_prompt_with_arguments' && argument.name === 'arg1' ? ARG1_VALUES.filter((v) => v.startsWith(argument.value)) : [];
      return { completion: { values, total: values.length, hasMore: false } };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      this.calls.push(request.params.name);
      switch (request.params.name) {
        case 'test_simple_text':
          return { content: [{ type: 'text', text: 'A plain text answer from the upstream server' }] };
        case 'test_image_content':
          return { content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] };
        case 'test_audio_content':
          return { content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] };
        case 'test_embedded_resource':
          return { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'Text of an embedded resource' } }] };
        case 'test_multiple_content_types':
          return {
            content: [
              { type: 'text', text: 'Three kinds of content:' },
              { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
              { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"kind":"mixed","items":3}' } },
            ],
          };
        case 'test_tool_with_progress': {
          const progressToken = extra._meta?.progressToken;
          this.progressTokens.push(progressToken);
          for (const progress of [0, 50, 100]) {
            if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
            await pause(50);
          }
          return { content: [{ type: 'text', text: 'Reported progress to 100' }] };
        }
        case 'test_tool_with_logging': {
          for (const [i, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
            if (i > 0) await pause(50);
            await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'conformance', data } });
          }
          return { content: [{ type: 'text', text: 'Logged three messages' }] };
        }
        case 'test_error_handling':
          return { isError: true, content: [{ type: 'text', text: 'This tool fails on purpose' }] };
        case SCHEMA_2020_12_TOOL:
          return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
        default:
          return { isError: true, content: [{ type: 'text', text: `No tool named ${request.params.name}` }] };
      }
    });
    return server;
  }

  private read(uri: string): ReadResourceResult {
    this.requests.push(`resources/read ${uri}`);
    if (uri === 'test://static-text') return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: RED_PIXEL_PNG }] };
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id !== undefined) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    throw new McpError(-32002, `Resource not found: ${uri}`);
  }

  private prompt(name: string, args: Record<string, string>): GetPromptResult {
    this.requests.push(`prompts/get ${name}`);
    switch (name) {
      case 'test_simple_prompt':
        return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
      case 'test_prompt_with_arguments':
        return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }] };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
          ],
        };
      default:
        throw new McpError(ErrorCode.InvalidParams, `No prompt named ${name}`);
    }
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function tinyPng(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0); // width
  header.writeUInt32BE(1, 4); // height
  header.writeUInt8(8, 8); // bits per channel
  header.writeUInt8(2, 9); // truecolour RGB
  // One scanline: filter byte 0, then the red pixel.
  const pixels = deflateSync(Buffer.from([0, 255, 0, 0]));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', header), pngChunk('IDAT', pixels), pngChunk('IEND', Buffer.alloc(0))]);
}

function silentWav(samples: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16); // PCM format chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24); // sample rate
  header.writeUInt32LE(8000, 28); // bytes per second
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples, 40);
  // Unsigned 8-bit silence is 128.
  return Buffer.concat([header, Buffer.alloc(samples, 128)]);
}
