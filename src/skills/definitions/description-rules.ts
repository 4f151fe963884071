// The rule set an upstream tool's text is read against before it is served (docs/tools-and-skills.md, pinned definitions):
// text aimed at the model rather than describing the tool, the shapes tool-poisoning attacks take. A match
// is not proof of an attack: it sends the definition to an admin's review instead of to the model.
export interface DescriptionFlag {
  rule: DescriptionRule;
  // Where: `description`, `title`, or a JSON pointer into the input schema (`inputSchema/properties/x/description`).
  field: string;
  // The matched text with a little context, invisible characters written as \u{…}.
  excerpt: string;
}

export type DescriptionRule =
  'too_long' | 'instruction_override' | 'directive_to_model' | 'hidden_tag' | 'invisible_unicode' | 'concealment' | 'sensitive_files';

// A tool's description longer than this is flagged (the text a model reads for every tool, every turn).
export const DESCRIPTION_REVIEW_LIMIT = 2048;
// A parameter's description or a title longer than this is flagged.
const FIELD_REVIEW_LIMIT = 1024;

const RULES: Array<[DescriptionRule, RegExp]> = [
  [
    'instruction_override',
    /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|system)\s+(instructions?|prompts?|messages?|rules?|directions?)/i,
  ],
  [
    'directive_to_model',
    /\b(you\s+(must|should\s+always|are\s+required\s+to|have\s+to|need\s+to|will\s+now)|as\s+an\s+ai\b|(before|after)\s+(using|calling)\s+(this|any)\s+(other\s+)?tools?\b|always\s+(call|use|run)\s+this\s+tool)/i,
  ],
  // Tags a model reads as structure (<IMPORTANT>, <system>, <instructions>); everyday formatting tags pass.
  ['hidden_tag', /<\s*\/?\s*(?!(?:br|p|b|i|em|strong|code|pre|ul|ol|li|a|kbd|sup|sub)\b)[a-z][\w:-]*(\s[^>]*)?>/i],
  // Zero-width characters, bidirectional controls, the invisible Unicode "tag" block, soft hyphens.
  ['invisible_unicode', /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|[\u{E0000}-\u{E007F}]/u],
  [
    'concealment',
    /\b(do\s+not|don'?t|never)\s+(tell|mention|reveal|inform|show|notify|alert)\s+(this\s+to\s+)?(the\s+)?(user|human|operator)/i,
  ],
  ['sensitive_files', /(~\/\.ssh|\bid_rsa\b|\.aws\/credentials|\/etc\/(passwd|shadow)|(^|[\s/"'`])\.env\b|\bmcp\.json\b)/i],
];

// Every flag the tool's title, description and the descriptions and titles inside its input schema raise.
export function reviewDescriptions(definition: { title?: string; description?: string; inputSchema?: unknown }): DescriptionFlag[] {
  const flags: DescriptionFlag[] = [];
  if (typeof definition.description === 'string') check(definition.description, 'description', DESCRIPTION_REVIEW_LIMIT, flags);
  if (typeof definition.title === 'string') check(definition.title, 'title', FIELD_REVIEW_LIMIT, flags);
  const work: Array<[unknown, string]> = [[definition.inputSchema, 'inputSchema']];
  while (work.length > 0 && flags.length < 50) {
    const [node, path] = work.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (typeof value === 'string' && (key === 'description' || key === 'title')) check(value, at, FIELD_REVIEW_LIMIT, flags);
      else if (typeof value === 'object') work.push([value, at]);
    }
  }
  return flags;
}

function check(text: string, field: string, limit: number, flags: DescriptionFlag[]): void {
  if (text.length > limit) flags.push({ rule: 'too_long', field, excerpt: `${text.length} characters, more than ${limit}` });
  for (const [rule, pattern] of RULES) {
    const match = pattern.exec(text);
    if (match) flags.push({ rule, field, excerpt: excerpt(text, match.index, match[0].length) });
  }
}

function excerpt(text: string, at: number, length: number): string {
  const start = Math.max(0, at - 30);
  const end = Math.min(text.length, at + length + 30);
  const shown = text
    .slice(start, end)
    .replace(/[^\P{C}\n]|[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return `${start > 0 ? '…' : ''}${shown}${end < text.length ? '…' : ''}`;
}
