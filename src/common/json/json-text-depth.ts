// Whether a JSON text nests deeper than `maxDepth` (the outermost object or array is level 1, as in
// bounded-json), read before the text is parsed. JSON.parse of a text nested hundreds of thousands of levels
// takes the event loop for a second or more before anything can judge its depth; this reads each character
// once, with no recursion and no allocation, and stops at the first bracket past the cap. It counts brackets
// outside strings: for a well-formed text that is its depth; a malformed one is refused by the parser after.
export function jsonTextNestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
