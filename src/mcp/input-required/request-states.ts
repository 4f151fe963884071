import { createHash } from 'node:crypto';
import { canonicalJson } from '../../common/json/canonical-json.js';
import { type SecretBox, SecretBoxError } from '../../common/secrets/secret-box.js';

// The requestState Toolgate gives an MCP client with a source's request for input (revision 2026-07-28,
// SEP-2322). The client sends it back with its retry; the spec has a server treat it as an attacker's input:
// what it holds decides which source gets which state of its own, for whom. So it is sealed (SecretBox,
// AES-256-GCM, with the current secrets key only) and binds the round to what it was given for, each part
// checked when it comes back:
// - who: the tenant, the project, the key and the end user (Toolgate-User) of the request;
// - what: the endpoint (the project's, or a toolset's), the method and the tool's or prompt's name;
// - the arguments (a digest of them, as JSON with sorted keys): a retry sends those of the call it retries;
// - an expiry, REQUEST_STATE_TTL_MS after it was given;
// - the source that asked (the skill serving the tool or prompt, and its URL: sourceIdentity), checked when
//   the retry reaches a source (roundIsFor), as which source serves a name can change between rounds;
// and carries the source's own requestState, which the client never sees. It is not single-use (the spec
// asks for that only where a state must be redeemed once, which is the source's to enforce on its own state).

export const REQUEST_STATE_TTL_MS = 15 * 60_000;
const PURPOSE = 'toolgate/mcp-request-state';

// What a request is, for the state given with its answer.
export interface RoundBinding {
  tenantId: string;
  projectId: string;
  apiKeyId: string;
  user?: string;
  // The toolset whose endpoint the request came to (absent: the project's own).
  toolset?: string;
  method: 'tools/call' | 'prompts/get';
  name: string;
  arguments: unknown;
}

interface SealedRound {
  purpose: typeof PURPOSE;
  who: string;
  what: string;
  args: string;
  expiresAt: number;
  // The source's own requestState, if it gave one.
  state?: string;
  // The source that asked (sourceIdentity, a digest): the state goes back to it only.
  source?: string;
}

// The source's own state to send back (absent: it gave none), or why the state is refused.
export type OpenedState = { ok: true; sourceState?: string; source?: string } | { ok: false; reason: string };

export class RequestStates {
  constructor(
    private readonly box: SecretBox,
    private readonly ttlMs = REQUEST_STATE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  // `source`: the source that asked (sourceIdentity, a digest).
  seal(binding: RoundBinding, sourceState: string | undefined, source?: string): string {
    const sealed: SealedRound = {
      purpose: PURPOSE,
      ...digests(binding),
      expiresAt: this.now() + this.ttlMs,
      ...(sourceState !== undefined && { state: sourceState }),
      ...(source !== undefined && { source }),
    };
    return this.box.seal(JSON.stringify(sealed));
  }

  open(binding: RoundBinding, value: string): OpenedState {
    const sealed = this.unsealed(value);
    if (sealed === null) return refused('is not one this server gave, or was changed');
    if (sealed.expiresAt <= this.now())
      return refused(
        `has expired (it holds for ${Math.round(this.ttlMs / 60_000)} minutes): call again without it and without inputResponses`,
      );
    const expected = digests(binding);
    if (sealed.who !== expected.who) return refused('was given to another key, project or end user');
    if (sealed.what !== expected.what)
      return refused(`was given for another ${binding.method === 'tools/call' ? 'tool' : 'prompt'} or endpoint`);
    if (sealed.args !== expected.args)
      return refused('was given for other arguments: a retry sends the arguments of the request it retries');
    return {
      ok: true,
      ...(sealed.state !== undefined && { sourceState: sealed.state }),
      ...(sealed.source !== undefined && { source: sealed.source }),
    };
  }

  // The sealed round, or null: not sealed with the current key (a previous key, or the development key a
  // production instance also opens secrets with, would let a state be forged), not authentic, or not a round.
  private unsealed(value: string): SealedRound | null {
    if (this.box.needsResealing(value) || !canonicalBase64url(value.slice(value.lastIndexOf(':') + 1))) return null;
    let text: string;
    try {
      text = this.box.open(value);
    } catch (error) {
      if (error instanceof SecretBoxError) return null;
      throw error;
    }
    let sealed: unknown;
    try {
      sealed = JSON.parse(text);
    } catch {
      return null;
    }
    if (typeof sealed !== 'object' || sealed === null) return null;
    const round = sealed as Partial<SealedRound>;
    const wellFormed =
      round.purpose === PURPOSE &&
      typeof round.who === 'string' &&
      typeof round.what === 'string' &&
      typeof round.args === 'string' &&
      typeof round.expiresAt === 'number' &&
      (round.state === undefined || typeof round.state === 'string') &&
      (round.source === undefined || typeof round.source === 'string');
    return wellFormed ? (round as SealedRound) : null;
  }
}

// Base64url as it is written: trailing bits a decoder drops would let two texts open to the same state.
const canonicalBase64url = (text: string): boolean => Buffer.from(text, 'base64url').toString('base64url') === text;

const refused = (why: string): OpenedState => ({ ok: false, reason: `params.requestState ${why}` });

function digests(binding: RoundBinding): Pick<SealedRound, 'who' | 'what' | 'args'> {
  return {
    who: digest([binding.tenantId, binding.projectId, binding.apiKeyId, binding.user ?? null]),
    what: digest([binding.toolset ?? null, binding.method, binding.name]),
    args: digest(binding.arguments ?? {}),
  };
}

const digest = (value: unknown): string => createHash('sha256').update(canonicalJson(value)).digest('base64url');
