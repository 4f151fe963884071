import { ToolError } from '../../execution/tool-error.js';
import { closestLines } from './closest-lines.js';

export interface TextEdit {
  oldText: string;
  newText: string;
}

export interface EditedText {
  // The new text, in the file's own line endings.
  text: string;
  // Both texts with LF line endings, for the diff.
  before: string;
  after: string;
}

// Counting stops here: "occurs 1000+ times" says enough.
const MAX_COUNTED = 1000;

// A file whose every line ends in CRLF is edited as LF text and written back with CRLF, so an oldText
// copied from read_file (or written with plain newlines) matches. Mixed files are matched as they are.
export function usesCrlf(text: string): boolean {
  const crlf = text.indexOf('\r\n');
  return crlf !== -1 && !/(^|[^\r])\n/.test(text);
}

// Applies the edits in order, each to the text as the previous ones left it: each oldText must occur
// exactly once there. Nothing is returned unless every edit applies.
export function applyTextEdits(original: string, edits: readonly TextEdit[], display: string): EditedText {
  const crlf = usesCrlf(original);
  const toLf = (s: string) => (crlf ? s.replaceAll('\r\n', '\n') : s);
  const before = toLf(original);
  let text = before;
  edits.forEach((edit, index) => {
    const oldText = toLf(edit.oldText);
    const first = text.indexOf(oldText);
    const count = first === -1 ? 0 : occurrences(text, oldText, first);
    if (count !== 1) throw editMismatch(text, oldText, count, { index, total: edits.length, display });
    text = text.slice(0, first) + toLf(edit.newText) + text.slice(first + oldText.length);
  });
  return { text: crlf ? text.replaceAll('\n', '\r\n') : text, before, after: text };
}

// Overlapping occurrences count: 'aa' occurs twice in 'aaa', and replacing either would be a guess.
function occurrences(text: string, needle: string, first: number): number {
  let count = 1;
  for (let at = text.indexOf(needle, first + 1); at !== -1 && count < MAX_COUNTED; at = text.indexOf(needle, at + 1)) count++;
  return count;
}

function editMismatch(text: string, oldText: string, count: number, where: { index: number; total: number; display: string }): ToolError {
  const which = where.total === 1 ? 'oldText' : `Edit ${where.index + 1} of ${where.total}: its oldText`;
  const after = where.index > 0 ? ` as it stands after edit${where.index > 1 ? 's' : ''} 1${where.index > 1 ? `-${where.index}` : ''}` : '';
  const none = where.total > 1 ? ' No edit was applied; the file is unchanged.' : '';
  if (count === 0) {
    const near = closestLines(text, oldText);
    const hint = near.length
      ? `The closest line${near.length > 1 ? 's are' : ' is'} ${near.map((l) => `line ${l.line}: ${JSON.stringify(l.text)}`).join('; ')}. Copy oldText exactly from read_file (whitespace and indentation included) and call again.`
      : 'Nothing similar was found; read the file with read_file and copy oldText exactly from it.';
    return new ToolError('edit_not_found', `${which} occurs 0 times in '${where.display}'${after}. ${hint}${none}`);
  }
  const times = count >= MAX_COUNTED ? `${MAX_COUNTED}+` : String(count);
  return new ToolError(
    'edit_not_unique',
    `${which} occurs ${times} times in '${where.display}'${after}; it must occur exactly once. Include more of the surrounding lines in oldText so that it names one place, and call again.${none}`,
  );
}
