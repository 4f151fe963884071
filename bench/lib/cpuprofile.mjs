import path from 'node:path';

// Self time per function of a V8 .cpuprofile (what `node --cpu-prof` writes), from the sample timeline:
// each sample's time delta goes to the node that was on top of the stack. `windowUs` ([from, to] on the
// monotonic clock, in microseconds, like the profile's own timestamps) keeps only the samples taken while
// the load ran, leaving out start-up (module loading, migrations) and shutdown.
export function summarizeProfile(profile, { top = 25, repoRoot, windowUs } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n);
  // Native frames (fs bindings, builtins) and Node's own library code are charged to the nearest caller
  // in a package or in dist/: who asked for the work, not who carried it out.
  const ownCode = (url) => Boolean(url) && !url.startsWith('node:');
  const jsCaller = (node) => {
    for (let n = parentOf.get(node.id); n; n = parentOf.get(n.id)) if (ownCode(n.callFrame.url)) return n;
    return null;
  };
  const selfUs = new Map();
  let at = profile.startTime;
  let windowStart = Infinity;
  let windowEnd = -Infinity;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (windowUs && (at < windowUs[0] || at > windowUs[1])) continue;
    windowStart = Math.min(windowStart, at);
    windowEnd = Math.max(windowEnd, at);
    const id = profile.samples[i];
    // timeDeltas[i] is the time before sample i; the next delta is how long this sample's stack lasted.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, delta));
  }
  if (windowUs && windowEnd < windowStart) throw new Error('no sample of the profile falls inside the measured window');
  const functions = new Map();
  const places = new Map();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const { callFrame } = node;
    totalUs += us;
    if (callFrame.functionName === '(idle)') idleUs += us;
    const caller = ownCode(callFrame.url) ? null : jsCaller(node);
    const where = caller ? placeOf(caller.callFrame.url, repoRoot) : placeOf(callFrame.url, repoRoot);
    const name = callFrame.functionName || '(anonymous)';
    const at = (frame) => `${shortUrl(frame.url, repoRoot)}:${frame.lineNumber + 1}`;
    const own = callFrame.url ? at(callFrame) : 'native';
    const line = caller
      ? `${own}, for ${caller.callFrame.functionName || '(anonymous)'} (${at(caller.callFrame)})`
      : callFrame.url
        ? own
        : '';
    const key = `${name}\u0000${line}`;
    const entry = functions.get(key) ?? { functionName: name, location: line, place: where, selfUs: 0 };
    entry.selfUs += us;
    functions.set(key, entry);
    places.set(where, (places.get(where) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  const rank = (entries) => entries.sort((a, b) => b.selfUs - a.selfUs);
  return {
    durationMs: (profile.endTime - profile.startTime) / 1000,
    windowMs: windowUs ? (windowEnd - windowStart) / 1000 : null,
    sampledMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: busyUs / 1000,
    functions: rank([...functions.values()].filter((f) => f.functionName !== '(idle)'))
      .slice(0, top)
      .map((f) => ({ ...f, selfMs: f.selfUs / 1000, percentOfBusy: pct(f.selfUs) })),
    places: rank([...places.entries()].filter(([p]) => p !== '(idle)').map(([place, us]) => ({ place, selfUs: us })))
      .slice(0, top)
      .map((p) => ({ ...p, selfMs: p.selfUs / 1000, percentOfBusy: pct(p.selfUs) })),
  };
}

// Groups frames by who owns the code: a package, the service's own dist/ files, Node's internals, V8.
function placeOf(url, repoRoot) {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node: internals';
  if (url.startsWith('wasm://')) return 'WebAssembly';
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (repoRoot && file.startsWith(path.join(repoRoot, 'dist')))
    return `dist/${path.relative(path.join(repoRoot, 'dist'), file).split('/')[0]}`;
  return file;
}

function shortUrl(url, repoRoot) {
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  if (repoRoot && file.startsWith(repoRoot)) return path.relative(repoRoot, file);
  return file;
}

export function renderSummary(summary) {
  const lines = [];
  lines.push(
    `Profile: ${summary.durationMs.toFixed(0)} ms` +
      (summary.windowMs == null ? '' : `, of which ${summary.windowMs.toFixed(0)} ms under load are summarised`) +
      `: main thread busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms. Percentages are of busy time.`,
    '',
    '| # | self ms | % busy | function | where |',
    '| ---: | ---: | ---: | --- | --- |',
  );
  summary.functions.forEach((f, i) =>
    lines.push(`| ${i + 1} | ${f.selfMs.toFixed(0)} | ${f.percentOfBusy.toFixed(1)} | \`${f.functionName}\` | ${f.location || f.place} |`),
  );
  lines.push(
    '',
    'Self time by the code that asked for it (native and node: frames counted with their nearest caller in a package or dist/):',
    '',
    '| self ms | % busy | code owned by |',
    '| ---: | ---: | --- |',
  );
  for (const p of summary.places) lines.push(`| ${p.selfMs.toFixed(0)} | ${p.percentOfBusy.toFixed(1)} | ${p.place} |`);
  return lines.join('\n');
}
