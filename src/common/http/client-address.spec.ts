import { clientAddress, clientOf } from './client-address.js';

describe('client addresses', () => {
  it('sees an IPv4 client on a dual-stack socket as its IPv4 address', () => {
    expect(clientAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3')).toBe('10.1.2.3');
    expect(clientAddress(undefined)).toBe('unknown');
    expect(clientOf('::ffff:10.1.2.3')).toBe('10.1.2.3');
  });

  it('counts an IPv6 client by its /64, however the address is written', () => {
    const one = clientOf('2001:db8:0:12::1');
    expect(one).toBe('2001:db8:0:12::/64');
    expect(clientOf('2001:0DB8:0000:0012:ffff:1:2:3')).toBe(one);
    expect(clientOf('2001:db8:0:12:abcd::%eth0')).toBe(one);
    expect(clientOf('2001:db8:0:13::1')).not.toBe(one);
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('fe80::')).toBe('fe80:0:0:0::/64');
  });

  it('keeps whole what is not a plain IPv6 address (NAT64, malformed)', () => {
    expect(clientOf('64:ff9b::192.0.2.1')).toBe('64:ff9b::192.0.2.1');
    expect(clientOf('1:2:3')).toBe('1:2:3');
    expect(clientOf('1::2::3')).toBe('1::2::3');
    expect(clientOf('1:2:3:4:5:6:7:8:9')).toBe('1:2:3:4:5:6:7:8:9');
  });
});
