import { AppError } from '../../common/errors/app-error.js';
import { orList, quoteValue } from './json-preview.js';

const LISTED_TOOLS = 20;
const MIN_FRAGMENT = 3;

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("raed" -> "read" costs 1).
// Gives up early (returns limit + 1) once the distance must exceed `limit`, so a 10 KB name costs little.
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      current[j] = d;
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length];
}

// Close names first (small edit distance, case-insensitive), then names the input is a prefix or part of
// ("list" -> "list_files"), or that are part of it ("read_file_now" -> "read_file").
export function suggestNames(input: string, candidates: readonly string[], max = 3): string[] {
  const needle = input.trim().toLowerCase();
  if (!needle || max <= 0) return [];
  const ranked: { name: string; rank: number; distance: number }[] = [];
  for (const name of new Set(candidates)) {
    const hay = name.toLowerCase();
    const limit = Math.max(1, Math.floor(Math.max(needle.length, hay.length) / 3));
    const distance = editDistance(needle, hay, limit);
    if (distance <= limit) ranked.push({ name, rank: 0, distance });
    else if (needle.length >= MIN_FRAGMENT && (hay.startsWith(needle) || needle.startsWith(hay))) {
      ranked.push({ name, rank: 1, distance: Math.abs(hay.length - needle.length) });
    } else if ((needle.length >= MIN_FRAGMENT && hay.includes(needle)) || (hay.length >= MIN_FRAGMENT && needle.includes(hay))) {
      ranked.push({ name, rank: 2, distance: Math.abs(hay.length - needle.length) });
    }
  }
  ranked.sort((x, y) => x.rank - y.rank || x.distance - y.distance || x.name.localeCompare(y.name));
  return ranked.slice(0, max).map((entry) => entry.name);
}

// `where`: what offers the tools (a toolset offers its own, under the names it shows).
export function toolNotFound(name: string, available: readonly string[], where = 'this project'): AppError {
  const suggestions = suggestNames(name, available);
  let message = `No tool named ${quoteValue(name, 60)} in ${where}.`;
  if (suggestions.length > 0) {
    message += ` Did you mean ${orList(suggestions.map((s) => `'${s}'`))}?`;
  } else if (available.length > 0) {
    const listed = [...available].sort().slice(0, LISTED_TOOLS).join(', ');
    const more = available.length > LISTED_TOOLS ? `, and ${available.length - LISTED_TOOLS} more` : '';
    message += ` Available tools: ${listed}${more}.`;
  } else {
    message += where === 'this project' ? ' This project has no tools enabled.' : ' It offers no tools now.';
  }
  return new AppError(404, 'tool_not_found', message, { details: { suggestions } });
}
