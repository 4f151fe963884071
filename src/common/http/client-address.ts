// One client, one key: an IPv4 client on a dual-stack socket is seen as ::ffff:a.b.c.d.
export function clientAddress(remote: string | undefined): string {
  if (remote === undefined) return 'unknown';
  return remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote;
}

// The client an address stands for when counting what it does wrong: an IPv4 address, or an IPv6 address's
// /64 (one host is given a whole /64 and may use any address in it, so counting by address would give it
// 2^64 fresh counts). An IPv6 address that embeds an IPv4 one (NAT64's 64:ff9b::a.b.c.d) stands for that
// IPv4 client, and is counted whole.
export function clientOf(remote: string | undefined): string {
  const address = clientAddress(remote);
  if (!address.includes(':') || address.includes('.')) return address;
  const groups = expandIPv6(address.split('%')[0]);
  return groups === null ? address : `${groups.slice(0, 4).join(':')}::/64`;
}

// The eight groups of an IPv6 address written with or without `::`, each without leading zeros; null when it
// is not one.
function expandIPv6(address: string): string[] | null {
  const halves = address.toLowerCase().split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const tail = halves.length === 1 || halves[1] === '' ? [] : halves[1].split(':');
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array.from({ length: halves.length === 1 ? 0 : missing }, () => '0'), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return null;
  return groups.map((group) => group.replace(/^0+(?=.)/, ''));
}
