import { Injectable } from '@nestjs/common';
import { measureJson } from '../../common/json/bounded-json.js';
import { SecretBox } from '../../common/secrets/secret-box.js';
import { MAX_ARGUMENT_DEPTH } from '../../execution/validation/argument-parser.js';
import { type InputRequiredAnswer, type InputRound, inputCapabilities, INPUT_REQUIRED } from '../../execution/input-required.js';
import { INVOCATION_ID_META } from '../mcp-tool-results.js';
import { RequestStates, type RoundBinding } from './request-states.js';

// Multi round-trip requests (protocol revision 2026-07-28, SEP-2322) relayed between an MCP client and the
// MCP sources behind a project's tools and prompts. Every tools/call and prompts/get of that revision opens
// a round here: its inputResponses and requestState are checked (-32602 when malformed, or when the state
// does not open for this very request: request-states.ts), and the round goes with the call to the source
// (ToolContext.inputRound; McpFederation for prompts), which is spoken to at that revision when it speaks
// it (src/skills/mcp/modern-upstream.ts). A source that answers input_required has its request relayed
// (answer): its inputRequests as it sent them (a request the client did not declare it answers is not:
// the call fails instead), and a requestState of Toolgate's, sealed, holding the source's own.

const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

// The relayed request for input, as the client gets it.
export interface InputRequiredResult {
  resultType: typeof INPUT_REQUIRED;
  inputRequests?: InputRequiredAnswer['inputRequests'];
  requestState: string;
  _meta?: Record<string, unknown>;
}

// One request's round: what goes to the source, and how its request for input is answered to the client.
export class ClientRound {
  constructor(
    readonly round: InputRound,
    private readonly binding: RoundBinding,
    private readonly states: RequestStates,
  ) {}

  // `invocationId`: the audit row of the call that asked (a tool's), named in _meta as on every tool result.
  answer(required: InputRequiredAnswer, invocationId?: string): InputRequiredResult {
    return {
      resultType: INPUT_REQUIRED,
      ...(required.inputRequests !== undefined && { inputRequests: required.inputRequests }),
      requestState: this.states.seal(this.binding, required.requestState, required.source),
      ...(invocationId !== undefined && { _meta: { [INVOCATION_ID_META]: invocationId } }),
    };
  }
}

// Who asks, as the MCP endpoint knows them.
export interface RoundCaller {
  tenantId: string;
  projectId: string;
  principal: { apiKeyId: string; user?: string };
  catalogue?: { toolset: string };
}

@Injectable()
export class McpInputRounds {
  private readonly states: RequestStates;

  constructor(box: SecretBox) {
    this.states = new RequestStates(box);
  }

  // The round a tools/call or prompts/get of revision 2026-07-28 carries (`params`, its envelope checked
  // already), or why it is refused: -32602, nothing runs.
  open(caller: RoundCaller, method: RoundBinding['method'], params: Record<string, unknown>): ClientRound | string {
    const { inputResponses, requestState } = params;
    if (inputResponses !== undefined) {
      if (!isPlainObject(inputResponses))
        return "params.inputResponses must be an object: the client's answers, by the keys of the inputRequests they answer";
      for (const [key, response] of Object.entries(inputResponses)) {
        if (!isPlainObject(response))
          return `params.inputResponses[${JSON.stringify(key.slice(0, 64))}] must be an object: the result of the input request it answers`;
      }
    }
    if (requestState !== undefined && typeof requestState !== 'string')
      return 'params.requestState must be the string this server gave with its input_required result';
    const meta = isPlainObject(params._meta) ? params._meta : {};
    // What goes on to the source is written as JSON there: held to the depth arguments are held to, so a
    // client's nesting is refused here as its own mistake, not met as a stack overflow on the way out.
    if (inputResponses !== undefined && nestsTooDeep(inputResponses))
      return `params.inputResponses nest more than ${MAX_ARGUMENT_DEPTH} levels deep; flatten them`;
    if (nestsTooDeep(meta[CLIENT_CAPABILITIES_META]))
      return `params._meta["${CLIENT_CAPABILITIES_META}"] nests more than ${MAX_ARGUMENT_DEPTH} levels deep`;
    const binding: RoundBinding = {
      tenantId: caller.tenantId,
      projectId: caller.projectId,
      apiKeyId: caller.principal.apiKeyId,
      ...(caller.principal.user !== undefined && { user: caller.principal.user }),
      ...(caller.catalogue && { toolset: caller.catalogue.toolset }),
      method,
      name: typeof params.name === 'string' ? params.name : '',
      arguments: params.arguments ?? {},
    };
    let sourceState: string | undefined;
    let stateSource: string | undefined;
    if (requestState !== undefined) {
      const opened = this.states.open(binding, requestState);
      if (!opened.ok) return opened.reason;
      sourceState = opened.sourceState;
      stateSource = opened.source;
    }
    const round: InputRound = {
      ...(inputResponses !== undefined && { inputResponses }),
      ...(sourceState !== undefined && { requestState: sourceState }),
      ...(stateSource !== undefined && { requestStateSource: stateSource }),
      clientCapabilities: inputCapabilities(meta[CLIENT_CAPABILITIES_META]),
    };
    return new ClientRound(round, binding, this.states);
  }
}

// Whether an answer is a relayed request for input (a prompt's, which McpFederation audits so).
export const isInputRequiredResult = (value: unknown): value is InputRequiredResult =>
  isPlainObject(value) && value.resultType === INPUT_REQUIRED;

// Counted as arguments are: the object itself is level 1.
const nestsTooDeep = (value: unknown): boolean =>
  measureJson(value, { maxDepth: MAX_ARGUMENT_DEPTH, maxBytes: Number.POSITIVE_INFINITY }) !== 'fits';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
