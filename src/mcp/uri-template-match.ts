// Whether a URI is one an RFC 6570 template can expand to, without a regular expression: an upstream
// server's template is a stranger's text, and the regex the SDK builds from `{a}-{b}-{c}` backtracks
// polynomially on a long URI that does not match. Here each template part moves a set of reachable
// positions forward, so a match costs at most parts x URI length steps.

// A template longer, or with more expressions, than any real one is not matched at all.
export const MAX_TEMPLATE_LENGTH = 1024;
const MAX_EXPRESSIONS = 32;
export const MAX_URI_LENGTH = 4096;

type Part = { literal: string } | { lead: string; anyChar: boolean; optional: boolean };

// What one expression can expand to, by its operator: `{x}` one or more characters of a path segment
// (no / ? #), `{+x}` and `{#x}` (after #) any characters, `{/x}` `{.x}` `{;x}` the operator and a segment,
// `{?x}` and `{&x}` (optional) the operator and a query.
function expression(body: string): Part | null {
  const operator = /^[+#./;?&]/.test(body) ? body[0] : '';
  const names = body.slice(operator.length);
  if (!/^[A-Za-z0-9_.%,*:]+$/.test(names)) return null;
  switch (operator) {
    case '':
      return { lead: '', anyChar: false, optional: false };
    case '+':
      return { lead: '', anyChar: true, optional: false };
    case '#':
      return { lead: '#', anyChar: true, optional: false };
    case '?':
    case '&':
      return { lead: operator, anyChar: true, optional: true };
    default:
      return { lead: operator, anyChar: false, optional: false };
  }
}

export function parseTemplate(template: string): Part[] | null {
  if (template.length > MAX_TEMPLATE_LENGTH) return null;
  const parts: Part[] = [];
  let expressions = 0;
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    if (open === -1) {
      parts.push({ literal: template.slice(at) });
      break;
    }
    if (open > at) parts.push({ literal: template.slice(at, open) });
    const close = template.indexOf('}', open);
    if (close === -1 || ++expressions > MAX_EXPRESSIONS) return null;
    const part = expression(template.slice(open + 1, close));
    if (part === null) return null;
    parts.push(part);
    at = close + 1;
  }
  return parts;
}

const SEGMENT_END = new Set(['/', '?', '#']);

export function templateMatches(template: string, uri: string): boolean {
  const parts = parseTemplate(template);
  if (parts === null || uri.length > MAX_URI_LENGTH) return false;
  // reachable[i]: the template so far can expand to uri.slice(0, i).
  let reachable = new Uint8Array(uri.length + 1);
  reachable[0] = 1;
  for (const part of parts) {
    const next = new Uint8Array(uri.length + 1);
    if ('literal' in part) {
      for (let i = 0; i + part.literal.length <= uri.length; i++)
        if (reachable[i] && uri.startsWith(part.literal, i)) next[i + part.literal.length] = 1;
    } else {
      // An optional expression may expand to nothing.
      if (part.optional) next.set(reachable);
      const runStarts = new Uint8Array(uri.length + 1);
      for (let i = 0; i <= uri.length; i++) if (reachable[i] && uri.startsWith(part.lead, i)) runStarts[i + part.lead.length] = 1;
      // `live`: some run that started at or before i is unbroken so far. Every run allows the same
      // characters, so a character that breaks one breaks them all.
      let live = false;
      for (let i = 0; i < uri.length; i++) {
        if (runStarts[i]) live = true;
        live = live && (part.anyChar || !SEGMENT_END.has(uri[i]));
        if (live) next[i + 1] = 1;
      }
    }
    reachable = next;
  }
  return reachable[uri.length] === 1;
}
