// Tenant A's side of the noisy-neighbour scenario (bench/noisy-neighbour.mjs starts it): A's attacks, each on
// its own loops, in a process of its own. An attacker's client runs on its own machine; run in the process
// that times tenant B, its work (8 MiB batch answers read, large answers parsed) would delay B's timers and
// be counted as the service's cost.
//
// Reads its settings from NOISY_ATTACKER (JSON: baseUrl, key, project, callers, only), prints one line
// `ready` once each attack answered once, and on a line `stop` from its standard input ends its loops and
// prints the answers it got as one line of JSON.
import { randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

const { baseUrl, key, project, callers, only } = JSON.parse(process.env.NOISY_ATTACKER);

const call = (tool, args, headers = {}) =>
  fetch(`${baseUrl}/v1/projects/${project}/tools/${tool}/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ arguments: args }),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));

const attacks = {
  'fill /dev/shm (1.9 GiB vs 256 MiB)': () =>
    call('shell_exec', { argv: ['sh', '-c', 'for i in $(seq 1 32); do head -c 62914560 /dev/zero > /dev/shm/f$i; done; sleep 2'] }),
  'hold commands (sleep 5)': () => call('shell_exec', { argv: ['sleep', '5'] }),
  'costly search_files': () => call('search_files', { pattern: '[a-j ]{1,400}[ab]{40}', path: 'corpus.txt' }),
  'keyed large answers': () => call('read_file', { path: 'large.txt' }, { 'idempotency-key': randomUUID() }),
  'batches of large answers': () =>
    fetch(`${baseUrl}/v1/projects/${project}/tools/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        calls: Array.from({ length: 32 }, (_, i) => ({ id: `c${i}`, tool: 'read_file', arguments: { path: 'large.txt' } })),
      }),
      // Read to its end, not parsed: 8 MiB parsed is a cost of the client, not of the service.
    }).then(async (res) => ({
      status: res.status,
      body: { status: res.status === 200 ? 'ok' : 'error', bytes: (await res.arrayBuffer()).byteLength },
    })),
  // An outsider's flood: small requests each with a made-up key of a new prefix (no key cached as unknown).
  'made-up keys (outsider)': () =>
    fetch(`${baseUrl}/v1/projects/${project}/tools`, {
      headers: { authorization: `Bearer tg_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('hex')}` },
    }).then(async (res) => ({ status: res.status, body: await res.json() })),
};
// `only` lists the attacks to run, numbered from 1 in the order above (NOISY_ATTACKS).
for (const [i, name] of Object.keys(attacks).entries()) if (only && !only.includes(i + 1)) delete attacks[name];

for (const [name, fn] of Object.entries(attacks)) {
  const res = await fn();
  process.stderr.write(`attack '${name}' once: ${res.status} ${JSON.stringify(res.body).slice(0, 240)}\n`);
}

let attacking = true;
const counts = {};
const loop = async (name, fn) => {
  counts[name] ??= { sent: 0, answered: {} };
  while (attacking) {
    const res = await fn().catch((error) => ({ status: `error ${error.code ?? error.message}` }));
    counts[name].sent++;
    const answer =
      res.status === 200
        ? (res.body.status ?? 'ok') + (res.body.result?.killed ? `/${res.body.result.killed}` : '')
        : `${res.status} ${res.body?.error?.code ?? ''}`;
    counts[name].answered[answer] = (counts[name].answered[answer] ?? 0) + 1;
  }
};
const loops = Object.entries(attacks).flatMap(([name, fn]) => Array.from({ length: callers }, () => loop(name, fn)));
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === 'stop') break;
}
attacking = false;
await Promise.all(loops);
process.stdout.write(`${JSON.stringify(counts)}\n`);
