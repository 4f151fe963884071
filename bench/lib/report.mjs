const MB = 1024 * 1024;

export const fmt = {
  rps: (v) => (v == null ? '—' : v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1)),
  ms: (v) => (v == null ? '—' : v >= 100 ? Math.round(v).toString() : v >= 10 ? v.toFixed(1) : v.toFixed(2)),
  mb: (v) => (v == null ? '—' : `${Math.round(v / MB)}`),
  ratio: (v) => (v == null || !Number.isFinite(v) ? '—' : `${v.toFixed(2)}x`),
  bytes: (v) => (v == null ? '—' : v >= 10_000 ? `${Math.round(v / 1024)} KiB` : `${v} B`),
};

export function table(headers, rows, align = []) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const rule = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [line(headers), line(rule), ...rows.map(line)].join('\n');
}

export const verdict = (pass) => (pass == null ? 'n/a' : pass ? 'PASS' : 'FAIL');
