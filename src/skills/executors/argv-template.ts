import { argumentLooksLikeOption, notPlaceableInCommand } from '../skills.errors.js';
import type { JsonSchema } from '../../execution/validation/schema-type.js';

// `{{param}}` is one argument's value (a whole element or inside one, never split); `{{...param}}` is an
// array argument spread into several elements, and must be a whole element.
const PLACEHOLDER = /\{\{(\.\.\.)?([A-Za-z_][A-Za-z0-9_-]*)\}\}/g;
const SPREAD_ELEMENT = /^\{\{\.\.\.([A-Za-z_][A-Za-z0-9_-]*)\}\}$/;

export class TemplateRefusal extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${location}: ${reason}`);
  }
}

// Checked at registration: the executable is literal, and every placeholder names a parameter of a
// type it can stand for.
export function vetArgvTemplate(argv: string[], inputSchema: JsonSchema): void {
  const properties = (inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  argv.forEach((element, i) => {
    // Relative to the executor: schemaRefused() prefixes 'executor'.
    const at = `/argv/${i}`;
    const placeholders = [...element.matchAll(PLACEHOLDER)];
    if (i === 0 && placeholders.length > 0) throw new TemplateRefusal(at, 'the executable (argv[0]) must be literal');
    for (const [, spread, name] of placeholders) {
      const property = properties[name];
      if (!property) throw new TemplateRefusal(at, `{{${spread ?? ''}${name}}} names no parameter of the input schema`);
      if (spread) {
        if (!SPREAD_ELEMENT.test(element)) throw new TemplateRefusal(at, `{{...${name}}} must be a whole argv element`);
        if (property.type !== 'array') throw new TemplateRefusal(at, `{{...${name}}} needs an array parameter`);
      } else if (!['string', 'integer', 'number', 'boolean'].includes(String(property.type))) {
        throw new TemplateRefusal(at, `{{${name}}} needs a string, number, integer or boolean parameter`);
      }
    }
  });
}

// Builds the argv for one call. A value that would begin an element with `-` where the template does
// not (a positional place) is refused, so a model cannot smuggle an option into the command; after a
// literal `--` every element is positional by convention and may begin with `-`.
export function renderArgv(template: string[], args: Record<string, unknown>): string[] {
  const argv: string[] = [];
  let afterDoubleDash = false;
  for (const element of template) {
    const spread = SPREAD_ELEMENT.exec(element);
    if (spread) {
      const values = (args[spread[1]] ?? []) as unknown[];
      for (const value of values) argv.push(checkPositional(scalar(value, spread[1]), spread[1], element, afterDoubleDash));
    } else {
      const rendered = element.replace(PLACEHOLDER, (_, __, name: string) => scalar(args[name], name));
      argv.push(rendered === element ? element : checkPositional(rendered, firstName(element), element, afterDoubleDash));
    }
    if (element === '--') afterDoubleDash = true;
  }
  return argv;
}

function checkPositional(rendered: string, name: string, template: string, afterDoubleDash: boolean): string {
  if (rendered.startsWith('-') && !template.startsWith('-') && !afterDoubleDash) {
    throw argumentLooksLikeOption(name);
  }
  return rendered;
}

function scalar(value: unknown, name: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw notPlaceableInCommand(name);
}

const firstName = (element: string) => [...element.matchAll(PLACEHOLDER)][0]?.[2] ?? '';
