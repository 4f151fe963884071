import {
  inputCapabilities,
  inputRequestsProblem,
  MAX_INPUT_REQUESTS,
  MAX_SOURCE_REQUEST_STATE_CHARS,
  requiredCapabilities,
  undeclaredInput,
} from './input-required.js';
import { headerValue } from '../skills/mcp/modern-upstream.js';

describe('a source’s request for input (MCP revision 2026-07-28, multi round-trip requests)', () => {
  const elicit = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: {} } } };

  it('is relayed only as the revision defines it: requests of the three kinds, a string state, at least one of them', () => {
    expect(inputRequestsProblem({ resultType: 'input_required', inputRequests: { a: elicit } })).toBeNull();
    expect(inputRequestsProblem({ requestState: 'only-state' })).toBeNull();
    expect(inputRequestsProblem({ inputRequests: { r: { method: 'roots/list' } }, requestState: 's' })).toBeNull();
    expect(inputRequestsProblem({})).toMatch(/neither inputRequests nor requestState/);
    expect(inputRequestsProblem({ requestState: 42 })).toMatch(/requestState that is not a string/);
    expect(inputRequestsProblem({ requestState: 'x'.repeat(MAX_SOURCE_REQUEST_STATE_CHARS + 1) })).toMatch(/longer than/);
    expect(inputRequestsProblem({ inputRequests: [] })).toMatch(/not an object/);
    expect(inputRequestsProblem({ inputRequests: { a: 'elicit' } })).toMatch(/\('a'\) without a method/);
    expect(inputRequestsProblem({ inputRequests: { a: { method: 'tools/call', params: {} } } })).toMatch(
      /of method 'tools\/call', which is none of/,
    );
    expect(inputRequestsProblem({ inputRequests: { a: { method: 'roots/list', params: [] } } })).toMatch(/params are not an object/);
    const many = Object.fromEntries(Array.from({ length: MAX_INPUT_REQUESTS + 1 }, (_, i) => [`k${i}`, elicit]));
    expect(inputRequestsProblem({ inputRequests: many })).toMatch(/more than 32 inputRequests/);
  });

  it('is relayed only where the client declared it answers each request (URL-mode elicitation: elicitation.url)', () => {
    const sampling = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };
    expect(undeclaredInput({ a: elicit, b: sampling }, { elicitation: {}, sampling: {} })).toBeNull();
    expect(undeclaredInput(undefined, {})).toBeNull();
    expect(undeclaredInput({ a: elicit, b: sampling }, { elicitation: {} })).toBe(
      "sampling/createMessage ('b'), but the client did not declare sampling",
    );
    expect(undeclaredInput({ r: { method: 'roots/list' } }, { roots: true })).toBe(
      "roots/list ('r'), but the client did not declare roots",
    );
    const url = {
      method: 'elicitation/create',
      params: { mode: 'url', url: 'https://example.com', message: 'Open it', elicitationId: '1' },
    };
    expect(undeclaredInput({ u: url }, { elicitation: {} })).toMatch(
      /URL-mode elicitation \('u'\), but the client did not declare elicitation\.url/,
    );
    expect(undeclaredInput({ u: url }, { elicitation: { url: {} } })).toBeNull();
  });

  it('tells a source only of the capabilities it may ask input of', () => {
    expect(
      inputCapabilities({
        sampling: {},
        elicitation: { form: {} },
        roots: { listChanged: true },
        experimental: { x: {} },
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      }),
    ).toEqual({
      sampling: {},
      elicitation: { form: {} },
      roots: { listChanged: true },
    });
    expect(inputCapabilities({ sampling: true })).toEqual({});
    expect(inputCapabilities(undefined)).toEqual({});
  });

  it('hands on what a source’s -32021 says the client must declare, when it names capabilities, and nothing else of its data', () => {
    expect(requiredCapabilities({ requiredCapabilities: { sampling: {} }, leaked: 'Bearer sk-live' })).toEqual({ sampling: {} });
    expect(requiredCapabilities({ requiredCapabilities: { sampling: {}, elicitation: true, 'a b': {} } })).toEqual({ sampling: {} });
    expect(requiredCapabilities({ requiredCapabilities: ['sampling'] })).toBeNull();
    expect(requiredCapabilities({ requiredCapabilities: { sampling: { note: 'x'.repeat(5000) } } })).toBeNull();
    expect(requiredCapabilities(undefined)).toBeNull();
  });

  it('names its tool or prompt in Mcp-Name as the revision writes headers', () => {
    expect(headerValue('book_table')).toBe('book_table');
    expect(headerValue('a name with spaces')).toBe('a name with spaces');
    expect(headerValue('café')).toBe(`=?base64?${Buffer.from('café').toString('base64')}?=`);
    expect(headerValue(' padded')).toMatch(/^=\?base64\?/);
    expect(headerValue('=?base64?looks-encoded?=')).toMatch(/^=\?base64\?PT9iYXNlNjQ/);
  });
});
