import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CallToolResult, GetPromptResult, Prompt, Tool } from '@modelcontextprotocol/sdk/types.js';

// The tools and the prompt of an upstream MCP server of revision 2026-07-28 that ask their client for input
// (multi round-trip requests, SEP-2322), as the 2026-07-28 conformance suite's input-required scenarios
// call them by name: each answers `resultType: "input_required"` with the requests it needs answered and,
// where it keeps something between rounds, a requestState of its own (HMAC-signed: a server must not trust
// what comes back through the client), then its result once the client's retry carries the answers.
// Toolgate relays both ways (src/mcp/input-required); these are the upstream it relays.

const NO_ARGUMENTS = { type: 'object', properties: {} } as const;

export const INPUT_REQUIRED_TOOLS: Tool[] = [
  {
    name: 'test_input_required_result_elicitation',
    description: "Asks the user's name (elicitation), then greets them",
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_input_required_result_sampling',
    description: 'Asks the client’s model a question (sampling), then answers with its reply',
    inputSchema: NO_ARGUMENTS,
  },
  { name: 'test_input_required_result_list_roots', description: "Asks for the client's roots, then names them", inputSchema: NO_ARGUMENTS },
  {
    name: 'test_input_required_result_request_state',
    description: 'Asks for a confirmation with a state of its own, which it checks on the retry',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks for a name, a model’s greeting and the roots at once',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_input_required_result_multi_round',
    description: 'Asks a name, then a colour, its state changing between the rounds',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_input_required_result_tampered_state',
    description: 'Asks for a confirmation; refuses a state it did not sign',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_input_required_result_capabilities',
    description: 'Asks only for what the client declared it answers (sampling, elicitation)',
    inputSchema: NO_ARGUMENTS,
  },
  // The stateless-server scenario's: one needs sampling declared (-32021 otherwise); one asks the user in its
  // result, never by a request of its own on the call's stream.
  {
    name: 'test_missing_capability',
    description: 'Asks the client’s model (sampling); refuses a client that did not declare sampling',
    inputSchema: NO_ARGUMENTS,
  },
  {
    name: 'test_streaming_elicitation',
    description: 'Asks the user (elicitation) in its result; refuses a client that did not declare elicitation',
    inputSchema: NO_ARGUMENTS,
  },
  // A hostile source's: asks with an elicitation whose params nest `levels` arrays deep (written as text:
  // deepInputRequired), to see the answer refused before it is parsed.
  {
    name: 'deep_input_request',
    description: 'Asks with an input request nested as deep as it is told',
    inputSchema: { type: 'object', properties: { levels: { type: 'integer' } } },
  },
  // A stand-in for a tool of Toolgate's own callers: asks for a name, then echoes its arguments.
  {
    name: 'book_table',
    description: 'Asks who the table is for, then books it',
    inputSchema: { type: 'object', properties: { seats: { type: 'integer' } }, required: ['seats'] },
  },
];

export const INPUT_REQUIRED_PROMPT: Prompt = {
  name: 'test_input_required_result_prompt',
  description: 'Asks what context to use (elicitation), then writes the prompt',
};

// What a request of revision 2026-07-28 carried beside its parameters.
export interface Round {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  capabilities: Record<string, unknown>;
}

export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
}

// A JSON-RPC error the fixture answers.
export class FixtureRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

// MissingRequiredClientCapabilityError: the request needs a capability the client did not declare.
const missing = (capability: string) =>
  new FixtureRpcError(-32021, 'Missing required client capability', { requiredCapabilities: { [capability]: {} } });

const elicit = (message: string, property: string, type = 'string') => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties: { [property]: { type } }, required: [property] } },
});
const sample = (text: string, maxTokens: number) => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
});
const ROOTS = { method: 'roots/list', params: {} };

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

export class InputRequiredFixtures {
  private readonly key = randomBytes(32);

  isTool(name: string): boolean {
    return INPUT_REQUIRED_TOOLS.some((tool) => tool.name === name);
  }

  call(name: string, args: Record<string, unknown>, round: Round): CallToolResult | InputRequiredResult {
    const responses = round.inputResponses ?? {};
    switch (name) {
      case 'test_input_required_result_elicitation': {
        const answer = accepted(responses.user_name);
        if (typeof answer?.name !== 'string')
          return { resultType: 'input_required', inputRequests: { user_name: elicit('What is your name?', 'name') } };
        return text(`Hello, ${answer.name}!`);
      }
      case 'test_input_required_result_sampling': {
        const reply = sampled(responses.capital_question);
        if (reply === null)
          return { resultType: 'input_required', inputRequests: { capital_question: sample('What is the capital of France?', 100) } };
        return text(`The model said: ${reply}`);
      }
      case 'test_input_required_result_list_roots': {
        const roots = listedRoots(responses.client_roots);
        if (roots === null) return { resultType: 'input_required', inputRequests: { client_roots: ROOTS } };
        return text(`Roots: ${roots.join(', ') || '(none)'}`);
      }
      case 'test_input_required_result_request_state':
      case 'test_input_required_result_tampered_state': {
        const state = round.requestState === undefined ? null : this.verified(round.requestState, name);
        if (round.requestState !== undefined && state === null)
          throw new FixtureRpcError(-32602, 'requestState failed its integrity check');
        if (state?.step === 'confirm' && accepted(responses.confirm)?.ok === true) return text('Confirmed: state-ok');
        return {
          resultType: 'input_required',
          inputRequests: { confirm: elicit('Please confirm', 'ok', 'boolean') },
          requestState: this.signed({ tool: name, step: 'confirm' }),
        };
      }
      case 'test_input_required_result_multiple_inputs': {
        const state = round.requestState === undefined ? null : this.verified(round.requestState, name);
        const name_ = accepted(responses.user_name)?.name;
        const greeting = sampled(responses.greeting);
        const roots = listedRoots(responses.client_roots);
        if (state?.step === 'all' && typeof name_ === 'string' && greeting !== null && roots !== null)
          return text(`${greeting}, ${name_}; roots: ${roots.join(', ')}`);
        return {
          resultType: 'input_required',
          inputRequests: {
            user_name: elicit('What is your name?', 'name'),
            greeting: sample('Generate a greeting', 50),
            client_roots: ROOTS,
          },
          requestState: this.signed({ tool: name, step: 'all' }),
        };
      }
      case 'test_input_required_result_multi_round': {
        const state = round.requestState === undefined ? null : this.verified(round.requestState, name);
        const person = accepted(responses.step1)?.name;
        if (state?.step === 1 && typeof person === 'string') {
          return {
            resultType: 'input_required',
            inputRequests: { step2: elicit('Step 2: What is your favorite color?', 'color') },
            requestState: this.signed({ tool: name, step: 2, person }),
          };
        }
        const colour = accepted(responses.step2)?.color;
        if (state?.step === 2 && typeof colour === 'string') return text(`${String(state.person)} likes ${colour}`);
        return {
          resultType: 'input_required',
          inputRequests: { step1: elicit('Step 1: What is your name?', 'name') },
          requestState: this.signed({ tool: name, step: 1 }),
        };
      }
      case 'test_input_required_result_capabilities': {
        const inputRequests: InputRequiredResult['inputRequests'] = {};
        if (declared(round.capabilities.sampling)) inputRequests.capital_question = sample('What is the capital of France?', 100);
        if (declared(round.capabilities.elicitation)) inputRequests.user_name = elicit('What is your name?', 'name');
        if (Object.keys(inputRequests).length === 0) return text('The client declared nothing to ask it');
        if (Object.keys(inputRequests).every((key) => responses[key] !== undefined)) return text('Thanks for the answers');
        return { resultType: 'input_required', inputRequests };
      }
      case 'test_missing_capability': {
        if (!declared(round.capabilities.sampling)) throw missing('sampling');
        const reply = sampled(responses.answer);
        if (reply === null) return { resultType: 'input_required', inputRequests: { answer: sample('Say something', 20) } };
        return text(`The model said: ${reply}`);
      }
      case 'test_streaming_elicitation': {
        if (!declared(round.capabilities.elicitation)) throw missing('elicitation');
        const answer = accepted(responses.user_name);
        if (typeof answer?.name !== 'string')
          return { resultType: 'input_required', inputRequests: { user_name: elicit('What is your name?', 'name') } };
        return text(`Hello, ${answer.name}!`);
      }
      case 'book_table': {
        const guest = accepted(responses.guest)?.name;
        if (typeof guest !== 'string')
          return {
            resultType: 'input_required',
            inputRequests: { guest: elicit('Who is the table for?', 'name') },
            requestState: this.signed({ tool: name, seats: args.seats }),
          };
        const state = round.requestState === undefined ? null : this.verified(round.requestState, name);
        return {
          content: [{ type: 'text', text: `Booked ${String(args.seats)} seats for ${guest}` }],
          structuredContent: { seats: args.seats, guest, stateCameBack: state !== null },
        };
      }
      case 'deep_input_request':
        throw new FixtureRpcError(-32602, `${name} answers only at revision 2026-07-28 (deepInputRequired)`);
      default:
        throw new FixtureRpcError(-32602, `No tool named ${name}`);
    }
  }

  prompt(round: Round): GetPromptResult | InputRequiredResult {
    const context = accepted(round.inputResponses?.user_context)?.context;
    if (typeof context !== 'string')
      return { resultType: 'input_required', inputRequests: { user_context: elicit('What context should the prompt use?', 'context') } };
    return { messages: [{ role: 'user', content: { type: 'text', text: `Answer with this in mind: ${context}` } }] };
  }

  private signed(state: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
  }

  private verified(value: string, tool: string): Record<string, unknown> | null {
    const [body, mac] = value.split('.');
    if (!body || !mac) return null;
    const expected = createHmac('sha256', this.key).update(body).digest();
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    return state.tool === tool ? state : null;
  }
}

// The JSON-RPC answer of deep_input_request, written as text: no JSON.stringify could write it.
export function deepInputRequired(id: unknown, levels: number): string {
  const deep = '['.repeat(levels) + ']'.repeat(levels);
  const request = `{"method":"elicitation/create","params":{"mode":"form","message":"Deep","requestedSchema":{"type":"object","properties":{}},"deep":${deep}}}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"resultType":"input_required","inputRequests":{"q":${request}}}}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const declared = (capability: unknown) => isObject(capability);

// An elicitation's answer, when the user accepted: its content.
function accepted(response: unknown): Record<string, unknown> | null {
  return isObject(response) && response.action === 'accept' && isObject(response.content) ? response.content : null;
}

// A sampling answer's text.
function sampled(response: unknown): string | null {
  return isObject(response) && isObject(response.content) && typeof response.content.text === 'string' ? response.content.text : null;
}

function listedRoots(response: unknown): string[] | null {
  if (!isObject(response) || !Array.isArray(response.roots)) return null;
  return response.roots.map((root) => (isObject(root) && typeof root.uri === 'string' ? root.uri : '?'));
}
