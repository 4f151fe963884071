// For an oldText that matched nowhere: the lines of the file most like its first non-blank line, so the
// model can see what it misremembered (indentation, a renamed identifier) and retry.

export interface NearLine {
  line: number;
  text: string;
}

const MAX_SHOWN = 3;
const MIN_SIMILARITY = 0.5;
// Long lines are compared on their start only; the answer shows at most this much of each.
const MAX_COMPARED_CHARS = 400;
const MAX_SHOWN_CHARS = 200;

export function closestLines(text: string, oldText: string): NearLine[] {
  const probe = oldText
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim();
  if (!probe) return [];
  const probeGrams = bigrams(probe.slice(0, MAX_COMPARED_CHARS));
  let probeSize = 0;
  for (const n of probeGrams.values()) probeSize += n;
  const scored: Array<NearLine & { score: number }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed === '') continue;
    const score = trimmed === probe ? 2 : similarity(probeGrams, probeSize, trimmed.slice(0, MAX_COMPARED_CHARS));
    if (score >= MIN_SIMILARITY) scored.push({ line: i + 1, text: lines[i].replace(/\r$/, ''), score });
  }
  return scored
    .sort((x, y) => y.score - x.score || x.line - y.line)
    .slice(0, MAX_SHOWN)
    .sort((x, y) => x.line - y.line)
    .map(({ line, text: t }) => ({ line, text: t.length > MAX_SHOWN_CHARS ? `${t.slice(0, MAX_SHOWN_CHARS)}...` : t }));
}

function bigrams(s: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return grams;
}

// Dice's coefficient over character pairs: 1 for the same text, 0 for nothing in common.
function similarity(probe: Map<string, number>, probeSize: number, candidate: string): number {
  const other = bigrams(candidate);
  let otherSize = 0;
  let shared = 0;
  for (const [g, n] of other) {
    otherSize += n;
    shared += Math.min(n, probe.get(g) ?? 0);
  }
  return probeSize + otherSize === 0 ? 0 : (2 * shared) / (probeSize + otherSize);
}
