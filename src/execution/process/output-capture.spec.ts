import { jest } from '@jest/globals';
import { OutputCapture } from './output-capture.js';

describe('OutputCapture', () => {
  it('keeps everything under the cap', () => {
    const overflow = jest.fn();
    const out = new OutputCapture(10, overflow);
    out.push(Buffer.from('héllo'));
    expect([out.text(), out.truncated, overflow.mock.calls.length]).toEqual(['héllo', false, 0]);
  });

  it('keeps exactly the cap without marking it truncated', () => {
    const out = new OutputCapture(4, jest.fn());
    out.push(Buffer.from('ab'));
    out.push(Buffer.from('cd'));
    expect([out.text(), out.truncated]).toEqual(['abcd', false]);
  });

  it('cuts at the cap, reports the overflow once, and never splits a character', () => {
    const overflow = jest.fn();
    const out = new OutputCapture(6, overflow);
    out.push(Buffer.from('ab€')); // 2 + 3 bytes
    out.push(Buffer.from('€€')); // the cap falls inside the second euro sign
    out.push(Buffer.from('more'));
    expect(out.text()).toBe('ab€');
    expect(out.truncated).toBe(true);
    expect(overflow).toHaveBeenCalledTimes(1);
  });
});
