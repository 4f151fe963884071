// JSON text that jsonb accepts. PostgreSQL's text and jsonb cannot hold U+0000: it stays visible, escaped, so
// the row still lands (in JSON text a NUL is the escape \u0000 after an even run of backslashes; an odd run
// escapes the \). Nor can jsonb hold a lone UTF-16 surrogate, which JSON.stringify writes as an escape
// (\ud800; a valid pair is written as itself): it becomes U+FFFD, so a call whose arguments hold one is
// audited like any other instead of losing its row.
export function jsonbSafe(text: string): string {
  if (text.includes('\\u0000')) text = text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\\\u0000');
  if (text.includes('\\ud')) text = text.replace(/(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g, '$1\\ufffd');
  return text;
}
