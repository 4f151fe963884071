import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../common/secrets/secret-box.js';
import { REQUEST_STATE_TTL_MS, RequestStates, type RoundBinding } from './request-states.js';

describe('RequestStates: the requestState Toolgate gives with a relayed request for input', () => {
  const key = randomBytes(32);
  let now = 1_000_000;
  const states = new RequestStates(new SecretBox(key), REQUEST_STATE_TTL_MS, () => now);
  const binding: RoundBinding = {
    tenantId: 't1',
    projectId: 'p1',
    apiKeyId: 'k1',
    method: 'tools/call',
    name: 'book_flight',
    arguments: { to: 'Oslo', seats: 2 },
  };

  it('opens for the request it was given for, with the source’s own state inside and not readable outside', () => {
    const sealed = states.seal(binding, 'source-state-42');
    expect(sealed).not.toContain('source-state-42');
    expect(states.open(binding, sealed)).toEqual({ ok: true, sourceState: 'source-state-42' });
    // The arguments' order is not theirs: the same arguments written in another order are the same.
    expect(states.open({ ...binding, arguments: { seats: 2, to: 'Oslo' } }, sealed)).toEqual({ ok: true, sourceState: 'source-state-42' });
    expect(states.open(binding, states.seal(binding, undefined))).toEqual({ ok: true });
  });

  it('refuses a state that was changed, truncated, or never sealed', () => {
    const sealed = states.seal(binding, 'x');
    // One character more decodes to the same bytes (its bits fall off the end), yet is not the state given.
    for (const tampered of [
      `${sealed}-TAMPERED`,
      `${sealed}x`,
      `${sealed}xy`,
      sealed.slice(0, -4),
      `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'AB' : 'AA'}`,
      'not-a-state',
      '',
    ]) {
      expect(states.open(binding, tampered)).toEqual({
        ok: false,
        reason: expect.stringMatching(/not one this server gave, or was changed/),
      });
    }
  });

  it('refuses a state sealed with another key, an earlier key the box still opens, or for another purpose', () => {
    const previous = randomBytes(32);
    const rotated = new RequestStates(new SecretBox(key, [previous]), REQUEST_STATE_TTL_MS, () => now);
    const byPrevious = new RequestStates(new SecretBox(previous), REQUEST_STATE_TTL_MS, () => now).seal(binding, 'x');
    expect(rotated.open(binding, byPrevious)).toMatchObject({ ok: false });
    expect(states.open(binding, new RequestStates(new SecretBox(randomBytes(32))).seal(binding, 'x'))).toMatchObject({ ok: false });
    // Another sealed value of the same key (a stored secret) is not a round.
    expect(states.open(binding, new SecretBox(key).seal('{"who":"a","what":"b","args":"c","expiresAt":9e15}'))).toMatchObject({
      ok: false,
    });
  });

  it('refuses a state of another tenant, project, key or end user', () => {
    const sealed = states.seal(binding, 'x');
    for (const other of [{ tenantId: 't2' }, { projectId: 'p2' }, { apiKeyId: 'k2' }, { user: 'someone' }]) {
      expect(states.open({ ...binding, ...other }, sealed)).toEqual({
        ok: false,
        reason: 'params.requestState was given to another key, project or end user',
      });
    }
  });

  it('refuses a state of another tool, prompt or endpoint, and of other arguments', () => {
    const sealed = states.seal(binding, 'x');
    expect(states.open({ ...binding, name: 'cancel_flight' }, sealed)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('another tool'),
    });
    expect(states.open({ ...binding, method: 'prompts/get' }, sealed)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('another prompt'),
    });
    expect(states.open({ ...binding, toolset: 'travel' }, sealed)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('endpoint'),
    });
    expect(states.open({ ...binding, arguments: { to: 'Oslo', seats: 3 } }, sealed)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('other arguments'),
    });
    expect(states.open({ ...binding, arguments: {} }, sealed)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('other arguments'),
    });
  });

  it('refuses a state past its expiry', () => {
    const sealed = states.seal(binding, 'x');
    now += REQUEST_STATE_TTL_MS - 1;
    expect(states.open(binding, sealed)).toMatchObject({ ok: true });
    now += 1;
    expect(states.open(binding, sealed)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^params\.requestState has expired \(it holds for 15 minutes\)/),
    });
  });
});
