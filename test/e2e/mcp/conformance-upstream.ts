import type http from 'node:http';
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
import {
  deepInputRequired,
  FixtureRpcError,
  INPUT_REQUIRED_PROMPT,
  INPUT_REQUIRED_TOOLS,
  type InputRequiredResult,
  InputRequiredFixtures,
  type Round,
} from './input-required-fixtures.js';

// The tools, resources, prompts and completions the MCP conformance suite asks for by name, served by a
// tenant's upstream MCP server: Toolgate imports its tools as an MCP skill and relays them, and relays its
// resources and prompts to keys that may call those tools, so the suite's checks judge what Toolgate
// hands on (content of every kind, progress, errors, schemas) rather than a fixture of Toolgate's own.
// Answers as an event stream, so the progress and log messages a tool sends while it runs travel with its call.
// It speaks protocol revision 2026-07-28 as well (answerModern: no sessions, every request its own POST with
// its envelope), where its tools and its prompt may ask the client for input (input-required-fixtures.ts):
// Toolgate speaks that revision to it for a client of that revision.

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
  // The 2026-07-28 suite's: log messages sent while it runs must reach only a client that asked for a level.
  { name: 'test_logging_tool', description: 'Logs a message at info level while it runs', inputSchema: NO_ARGUMENTS },
  { name: 'test_error_handling', description: 'Always answers an error result', inputSchema: NO_ARGUMENTS },
  {
    name: SCHEMA_2020_12_TOOL,
    description: 'Takes arguments described with JSON Schema 2020-12 keywords',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { $anchor: 'address', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
      // Composition and conditionals (SEP-2106): a name or an address, and an address whenever the name is "home".
      allOf: [{ anyOf: [{ required: ['name'] }, { required: ['address'] }] }],
      if: { properties: { name: { const: 'home' } }, required: ['name'] },
      then: { required: ['address'] },
      else: {},
    },
  },
  ...INPUT_REQUIRED_TOOLS,
];

// Not one of the suite's (a test adds it to the listing): a tool that requires its parameter mirrored into
// a header at revision 2026-07-28 (as x-mcp-header, SEP-2243, declares), as a server whose tool came to
// declare it after Toolgate imported it (Toolgate refuses a schema with that keyword, which it does not know).
export const MIRRORED_HEADER_TOOL: Tool = {
  name: 'weather_in_region',
  description: 'Names the weather of a region',
  inputSchema: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] },
};

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
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt embedding a resource',
    arguments: [{ name: 'resourceUri', description: 'The resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with an image' },
  INPUT_REQUIRED_PROMPT,
];

// What arg1 of test_prompt_with_arguments completes to.
export const ARG1_VALUES = ['paris', 'park', 'party', 'test-one', 'test-two'];

const MODERN = '2026-07-28';
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';

// One call of a tool, whichever revision it came at: `notify` sends a notification on the call's response;
// `round` is what a request of revision 2026-07-28 carried (absent: an earlier revision's request).
interface ToolRun {
  progressToken?: string | number;
  notify: (method: string, params: Record<string, unknown>) => Promise<void>;
  round?: Round & { logLevel?: unknown };
}

// A request of revision 2026-07-28 as it arrived: the method, the tool or prompt, what its round carried.
export interface ModernRequest {
  method: string;
  name?: string;
  inputResponses?: string[];
  requestState?: string;
  capabilities?: Record<string, unknown>;
  logLevel?: unknown;
  progressToken?: unknown;
}

export class ConformanceUpstream extends UpstreamMcpServer {
  protected override readonly jsonResponse = false;
  // The progressToken of each call of test_tool_with_progress (undefined: none was sent).
  readonly progressTokens: unknown[] = [];
  // Every resource read, prompt got and completion asked for: `resources/read test://…`, `prompts/get name`, `completion/complete …`.
  readonly requests: string[] = [];
  // Every request of revision 2026-07-28, in order.
  readonly modernRequests: ModernRequest[] = [];
  private readonly inputRequired = new InputRequiredFixtures();

  constructor() {
    super(CONFORMANCE_TOOLS);
  }

  protected override mcpServer(): Server {
    const server = new Server(
      { name: 'conformance-fixtures', version: '1.0.0' },
      { capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: CONFORMANCE_RESOURCES }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [
        { uriTemplate: CONFORMANCE_TEMPLATE, name: 'template-data', description: 'Data by id', mimeType: 'application/json' },
      ],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => this.read(request.params.uri));
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: CONFORMANCE_PROMPTS }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => this.prompt(request.params.name, request.params.arguments ?? {}));
    server.setRequestHandler(CompleteRequestSchema, (request) => {
      const { ref, argument } = request.params;
      this.requests.push(`completion/complete ${ref.type === 'ref/prompt' ? ref.name : ref.uri} ${argument.name}=${argument.value}`);
      const values =
        ref.type === 'ref/prompt' && ref.name === 'test_prompt_with_arguments' && argument.name === 'arg1'
          ? ARG1_VALUES.filter((v) => v.startsWith(argument.value))
          : [];
      return { completion: { values, total: values.length, hasMore: false } };
    });
    server.setRequestHandler(
      CallToolRequestSchema,
      (request, extra) =>
        this.runTool(request.params.name, request.params.arguments ?? {}, {
          progressToken: extra._meta?.progressToken,
          notify: (method, params) => extra.sendNotification({ method, params }),
        }) as Promise<CallToolResult>,
    );
    return server;
  }

  private async runTool(name: string, args: Record<string, unknown>, run: ToolRun): Promise<CallToolResult | InputRequiredResult> {
    this.calls.push(name);
    // Log messages go to a client of revision 2026-07-28 only when its request asked for them (a level).
    const log = (data: string) =>
      run.round && run.round.logLevel === undefined
        ? Promise.resolve()
        : run.notify('notifications/message', { level: 'info', logger: 'conformance', data });
    // Called at an earlier revision, it asks all the same, as a server that does not mind the revision would:
    // such a client cannot answer, and Toolgate says so (src/skills/mcp/upstream-rounds.ts).
    if (this.inputRequired.isTool(name)) return this.inputRequired.call(name, args, run.round ?? { capabilities: {} });
    switch (name) {
      case 'test_simple_text':
        return { content: [{ type: 'text', text: 'A plain text answer from the upstream server' }] };
      case 'test_image_content':
        return { content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return {
          content: [
            {
              type: 'resource',
              resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'Text of an embedded resource' },
            },
          ],
        };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Three kinds of content:' },
            { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"kind":"mixed","items":3}' },
            },
          ],
        };
      case 'test_tool_with_progress': {
        const { progressToken } = run;
        this.progressTokens.push(progressToken);
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) await run.notify('notifications/progress', { progressToken, progress, total: 100 });
          await pause(50);
        }
        return { content: [{ type: 'text', text: 'Reported progress to 100' }] };
      }
      case 'test_tool_with_logging': {
        for (const [i, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
          if (i > 0) await pause(50);
          await log(data);
        }
        return { content: [{ type: 'text', text: 'Logged three messages' }] };
      }
      case 'test_logging_tool':
        await log('A message nobody asked for');
        return { content: [{ type: 'text', text: 'Logged a message' }] };
      case 'test_error_handling':
        return { isError: true, content: [{ type: 'text', text: 'This tool fails on purpose' }] };
      case SCHEMA_2020_12_TOOL:
        return { content: [{ type: 'text', text: JSON.stringify(args) }] };
      case MIRRORED_HEADER_TOOL.name:
        return { content: [{ type: 'text', text: `Sunny in ${String(args.region)}` }] };
      default:
        return { isError: true, content: [{ type: 'text', text: `No tool named ${name}` }] };
    }
  }

  // Revision 2026-07-28: server/discover, tools/call and prompts/get, each POST on its own; the standard
  // headers must agree with the body and the envelope be there (as a server of the revision checks), so a
  // relay that gets them wrong is refused. Notifications a call sends make its answer an event stream.
  protected override async answerModern(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<boolean> {
    if (req.headers['mcp-protocol-version'] !== MODERN) return false;
    const message = (isObject(body) ? body : {}) as { id?: string | number; method?: string; params?: Record<string, unknown> };
    const params = isObject(message.params) ? message.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    let streaming = false;
    const send = (status: number, payload: Record<string, unknown>) => {
      const text = JSON.stringify({ jsonrpc: '2.0', id: message.id ?? null, ...payload });
      if (streaming) res.end(`event: message\ndata: ${text}\n\n`);
      else res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    };
    const notify = (method: string, notification: Record<string, unknown>) => {
      if (!streaming) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streaming = true;
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params: notification })}\n\n`);
      return Promise.resolve();
    };
    const method = message.method ?? '';
    const name = method === 'tools/call' || method === 'prompts/get' ? String(params.name) : undefined;
    const round: Round & { logLevel?: unknown } = {
      ...(isObject(params.inputResponses) && { inputResponses: params.inputResponses }),
      ...(typeof params.requestState === 'string' && { requestState: params.requestState }),
      capabilities: isObject(meta[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : {},
      ...(meta[LOG_LEVEL_META] !== undefined && { logLevel: meta[LOG_LEVEL_META] }),
    };
    this.modernRequests.push({
      method,
      ...(name !== undefined && { name }),
      ...(round.inputResponses && { inputResponses: Object.keys(round.inputResponses) }),
      ...(round.requestState !== undefined && { requestState: round.requestState }),
      capabilities: round.capabilities,
      ...(round.logLevel !== undefined && { logLevel: round.logLevel }),
      ...(meta.progressToken !== undefined && { progressToken: meta.progressToken }),
    });
    if (req.headers['mcp-method'] !== method)
      return (
        void send(400, { error: { code: -32020, message: `Mcp-Method (${String(req.headers['mcp-method'])}) is not the body's method` } }),
        true
      );
    if (name !== undefined && headerText(req.headers['mcp-name']) !== name)
      return (void send(400, { error: { code: -32020, message: `Mcp-Name is not the body's name` } }), true);
    if (meta[PROTOCOL_VERSION_META] !== MODERN || !isObject(meta[CLIENT_CAPABILITIES_META]))
      return (void send(400, { error: { code: -32602, message: 'The request envelope is missing' } }), true);
    if (name === MIRRORED_HEADER_TOOL.name && req.headers['mcp-param-region'] === undefined)
      return (void send(400, { error: { code: -32020, message: 'The Mcp-Param-Region header is required' } }), true);
    if (method === 'tools/call' && name === 'deep_input_request') {
      const levels = isObject(params.arguments) && typeof params.arguments.levels === 'number' ? params.arguments.levels : 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(deepInputRequired(message.id ?? null, levels));
      return true;
    }
    try {
      switch (method) {
        case 'server/discover':
          send(200, {
            result: {
              supportedVersions: [MODERN, '2025-11-25'],
              capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} },
              resultType: 'complete',
            },
          });
          break;
        case 'tools/call': {
          const progressToken =
            typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number' ? meta.progressToken : undefined;
          const result = await this.runTool(name!, isObject(params.arguments) ? params.arguments : {}, { progressToken, notify, round });
          send(200, { result: { resultType: 'complete', ...result } });
          break;
        }
        case 'prompts/get': {
          const result =
            name === INPUT_REQUIRED_PROMPT.name
              ? (this.requests.push(`prompts/get ${name}`), this.inputRequired.prompt(round))
              : this.prompt(name!, (isObject(params.arguments) ? params.arguments : {}) as Record<string, string>);
          send(200, { result: { resultType: 'complete', ...result } });
          break;
        }
        default:
          send(404, { error: { code: -32601, message: `Method not found: ${method}` } });
      }
    } catch (error) {
      if (!(error instanceof FixtureRpcError || error instanceof McpError)) throw error;
      send(error.code === -32021 ? 400 : 200, {
        error: {
          code: error.code,
          message: error.message,
          ...(error instanceof FixtureRpcError && error.data !== undefined && { data: error.data }),
        },
      });
    }
    return true;
  }

  private read(uri: string): ReadResourceResult {
    this.requests.push(`resources/read ${uri}`);
    if (uri === 'test://static-text')
      return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: RED_PIXEL_PNG }] };
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id !== undefined)
      return {
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
      };
    throw new McpError(-32002, `Resource not found: ${uri}`);
  }

  private prompt(name: string, args: Record<string, string>): GetPromptResult {
    this.requests.push(`prompts/get ${name}`);
    switch (name) {
      case 'test_simple_prompt':
        return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
      case 'test_prompt_with_arguments':
        return {
          messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }],
        };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            {
              role: 'user',
              content: {
                type: 'resource',
                resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
              },
            },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        };
      case INPUT_REQUIRED_PROMPT.name:
        throw new McpError(ErrorCode.InvalidParams, `${name} asks its client for input: get it at protocol revision ${MODERN}`);
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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// A standard header as the revision writes it: printable ASCII as it is, anything else as =?base64?…?=.
function headerText(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const encoded = /^=\?base64\?(.*)\?=$/.exec(value);
  return encoded ? Buffer.from(encoded[1], 'base64').toString('utf8') : value;
}

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
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', pixels),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
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
