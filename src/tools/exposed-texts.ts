// Through a toolset, the model knows tools by the names the toolset shows. The texts a run answers for the
// model (an error's message, a built-in's `hint`: "call read_file again with offset: 51") name the real
// tools; these put the shown names in their place. Only whole names outside paths are replaced: a name
// touching a quote, a slash, a dot before more of a name, or another name character is part of something
// else ('read_file.md', docs/read_file).

export type ToolRenames = ReadonlyMap<string, string>;

const patterns = new WeakMap<ToolRenames, RegExp>();

function patternOf(renames: ToolRenames): RegExp {
  let pattern = patterns.get(renames);
  if (!pattern) {
    // Tool names are [A-Za-z0-9_-]: nothing in them needs escaping. Longer names first, so a name that
    // begins another is not matched inside it.
    const names = [...renames.keys()].sort((a, b) => b.length - a.length);
    pattern = new RegExp(`(?<![\\w'"\`/.-])(?:${names.join('|')})(?![\\w'"\`/-]|\\.\\w)`, 'g');
    patterns.set(renames, pattern);
  }
  return pattern;
}

export function renameTools(text: string, renames: ToolRenames): string {
  if (renames.size === 0) return text;
  return text.replace(patternOf(renames), (name) => renames.get(name) ?? name);
}

// The levels a built-in's result keeps its texts at: read_file's `hint`, read_multiple_files' `files[i].hint`
// and `files[i].error.message`.
const TEXT_DEPTH = 4;

// A built-in tool's result with its texts for the model renamed: `hint` strings, and `message` of an `error`
// object. Everything else (contents, paths, names of entries) is data and stays as it is.
export function renameInResult(result: unknown, renames: ToolRenames, depth = 0): unknown {
  if (renames.size === 0 || depth > TEXT_DEPTH || typeof result !== 'object' || result === null) return result;
  if (Array.isArray(result)) {
    let changed = false;
    const items = result.map((item) => {
      const renamed = renameInResult(item, renames, depth + 1);
      changed ||= renamed !== item;
      return renamed;
    });
    return changed ? items : result;
  }
  let copy: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(result as Record<string, unknown>)) {
    let renamed: unknown = value;
    if (key === 'hint' && typeof value === 'string') renamed = renameTools(value, renames);
    else if (key === 'error' && isRecord(value) && typeof value.message === 'string') {
      const message = renameTools(value.message, renames);
      if (message !== value.message) renamed = { ...value, message };
    } else renamed = renameInResult(value, renames, depth + 1);
    if (renamed !== value) {
      copy ??= { ...(result as Record<string, unknown>) };
      copy[key] = renamed;
    }
  }
  return copy ?? result;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
