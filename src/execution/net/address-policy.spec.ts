import { AddressPolicy, classifyAddress, classifyHostname, isMetadataAddress } from './address-policy.js';

describe('classifyAddress', () => {
  it.each([
    ['169.254.169.254', /link-local\/cloud metadata/],
    ['fd00:ec2::254', /metadata/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['::1', /loopback/],
    ['169.254.1.1', /link-local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['fc00::1', /unique-local/],
    ['fdff:ffff::1', /unique-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.100.100.200', /metadata/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['::', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['ff02::1', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.192', /metadata/],
    ['192.0.2.10', /documentation/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.200', /documentation/],
    ['198.18.0.1', /benchmarking/],
    ['198.19.255.255', /benchmarking/],
    ['2001:db8::1', /documentation/],
    ['2001:2::1', /reserved/],
    ['3fff::1', /documentation/],
    ['100::1', /discard/],
    ['fec0::1', /site-local/],
    ['4000::1', /not global unicast/],
  ])('refuses %s', (address, reason) => {
    const verdict = classifyAddress(address);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(reason);
    expect(verdict.reason).toContain(address);
  });

  it('names the address and why in a sentence a model can act on', () => {
    expect(classifyAddress('169.254.169.254').reason).toBe('169.254.169.254 is a link-local/cloud metadata address');
  });

  it.each([
    ['::ffff:7f00:1', '127.0.0.1', /IPv4-mapped form of 127.0.0.1, a loopback/],
    ['::ffff:169.254.169.254', '169.254.169.254', /metadata/],
    ['::ffff:0:a00:1', '10.0.0.1', /IPv4-translated/],
    ['::7f00:1', '127.0.0.1', /IPv4-compatible/],
    ['::a9fe:a9fe', '169.254.169.254', /IPv4-compatible/],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', /NAT64 form of 169.254.169.254/],
    ['64:ff9b::10.0.0.1', '10.0.0.1', /NAT64/],
    ['2002:7f00:1::', '127.0.0.1', /6to4 form of 127.0.0.1/],
    ['2002:c0a8:101::1', '192.168.1.1', /6to4 form of 192.168.1.1, a private/],
  ])('judges %s by the IPv4 it embeds (%s)', (address, _v4, reason) => {
    const verdict = classifyAddress(address);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });

  it.each(['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1'])('refuses the Teredo address %s', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, reason: `${address} is a Teredo tunnel address` });
  });

  it('refuses the local-use NAT64 prefix whatever it embeds', () => {
    expect(classifyAddress('64:ff9b:1::808:808').reason).toMatch(/local-use NAT64/);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it('refuses what is not an address at all', () => {
    expect(classifyAddress('not-an-ip')).toEqual({ allowed: false, reason: 'not-an-ip is not a valid IP address' });
  });

  it('recognises metadata addresses in any form', () => {
    expect(isMetadataAddress('169.254.169.254')).toBe(true);
    expect(isMetadataAddress('::ffff:a9fe:a9fe')).toBe(true);
    expect(isMetadataAddress('64:ff9b::a9fe:a9fe')).toBe(true);
    expect(isMetadataAddress('fd00:ec2:0::254')).toBe(true);
    expect(isMetadataAddress('169.254.169.253')).toBe(false);
  });
});

describe('classifyHostname', () => {
  it.each([
    ['localhost', /loopback name/],
    ['LOCALHOST.', /loopback name/],
    ['api.localhost', /loopback name/],
    ['metadata.google.internal', /\.internal/],
    ['metadata.google.internal.', /\.internal/],
    ['ip-10-0-0-1.ec2.internal', /\.internal/],
    ['metadata', /single-label/],
    ['redis', /single-label/],
    ['printer.local', /multicast DNS/],
    ['nas.home.arpa', /home-network/],
    ['localhost.localdomain', /local-host/],
  ])('refuses the name %s', (name, reason) => {
    const verdict = classifyHostname(name);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });

  it.each(['example.com', 'api.github.com', 'internal.example.com', 'localhost.example.com'])('allows %s', (name) => {
    expect(classifyHostname(name)).toEqual({ allowed: true });
  });

  it('judges a host that is really an IPv4 address as that address', () => {
    expect(classifyHostname('127.1').reason).toBe('127.0.0.1 is a loopback address');
    expect(classifyHostname('[::1]').reason).toBe('::1 is a loopback address');
  });
});

describe('AddressPolicy', () => {
  it('opens an allowed host:port only on that port', () => {
    const policy = new AddressPolicy(['127.0.0.1:45678']);
    expect(policy.checkHost('127.0.0.1', 45678)).toEqual({ allowed: true });
    expect(policy.checkHost('127.0.0.1', 45679).allowed).toBe(false);
    expect(policy.checkResolved('127.0.0.1', 45678, '127.0.0.1')).toEqual({ allowed: true });
  });

  it('opens a bare host on every port, and compares canonical spellings', () => {
    const policy = new AddressPolicy(['LocalHost', '[::1]:8080', '0x7f.0.0.2']);
    expect(policy.checkHost('localhost', 3000).allowed).toBe(true);
    expect(policy.checkHost('[::1]', 8080).allowed).toBe(true);
    expect(policy.checkHost('[::1]', 8081).allowed).toBe(false);
    expect(policy.checkHost('127.0.0.2', 80).allowed).toBe(true);
  });

  it('does not open an address for other names that resolve to it', () => {
    const policy = new AddressPolicy(['127.0.0.1:45678']);
    const verdict = policy.checkResolved('attacker.example', 45678, '127.0.0.1');
    expect(verdict).toEqual({ allowed: false, reason: 'attacker.example resolves to 127.0.0.1, a loopback address' });
  });

  it('lets an opened name resolve privately, but never to a metadata address', () => {
    const policy = new AddressPolicy(['intranet.example.com']);
    expect(policy.checkResolved('intranet.example.com', 443, '10.0.0.8')).toEqual({ allowed: true });
    expect(policy.checkResolved('intranet.example.com', 443, '169.254.169.254').reason).toMatch(/metadata/);
    expect(new AddressPolicy(['169.254.169.254']).checkResolved('169.254.169.254', 80, '169.254.169.254').allowed).toBe(true);
  });

  it.each(['http://x', 'a:b:c', 'host:99999', '[::1'])('rejects the malformed entry %s', (entry) => {
    expect(() => new AddressPolicy([entry])).toThrow(/invalid allowHosts entry/);
  });
});
