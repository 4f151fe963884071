import type { ErrorObject } from 'ajv';
import { AppError } from '../../common/errors/app-error.js';
import { isPlainObject, jsonTypeOf, oneLine, orList, ownValue, previewJson, quoteValue } from './json-preview.js';
import { chooseBranch, claimBranchErrors, GROUPING_KEYWORDS } from './alternative-branches.js';
import { suggestNames } from './name-suggestions.js';
import { declaredTypes, renderLiteral, renderLiterals, renderSchemaType, type JsonSchema } from './schema-type.js';

export interface ToolArgumentIssue {
  path: string;
  keyword: string;
  message: string;
  expected?: string;
  received?: string;
}

export interface ToolRef {
  readonly name: string;
  readonly usage: string;
}

export interface DescribedIssues {
  readonly issues: ToolArgumentIssue[];
  // AJV errors left undescribed once a parameter already had MAX_ISSUES issues.
  readonly omitted: number;
}

const MAX_ISSUES = 20;
const MAX_MESSAGE_ISSUES = 10;
const MAX_LISTED_NAMES = 20;
const FORMAT_HINTS: Record<string, string> = {
  'date-time': 'e.g. 2025-01-31T09:30:00Z',
  date: 'e.g. 2025-01-31',
  time: 'e.g. 09:30:00Z',
  duration: 'e.g. P3DT4H',
  uuid: 'e.g. 123e4567-e89b-12d3-a456-426614174000',
};

export function usageLine(name: string, schema: JsonSchema): string {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const params = Object.keys(properties).map(
    (key) => `${key}${required.has(key) ? '' : '?'}: ${renderSchemaType(properties[key], schema)}`,
  );
  return `${name}(${params.join(', ')})`;
}

// The one 422 for arguments a tool refuses; the message names every problem and ends with the usage line.
export function invalidArguments(tool: ToolRef, issues: readonly ToolArgumentIssue[], omitted = 0): AppError {
  const unique = dedupe(issues);
  const kept = unique.slice(0, MAX_ISSUES);
  const listed = unique.slice(0, MAX_MESSAGE_ISSUES).map((issue) => issue.message);
  const hidden = unique.length - listed.length + omitted;
  let body = listed.join('; ');
  if (hidden > 0) body += `; and ${hidden} more ${hidden === 1 ? 'problem' : 'problems'}`;
  const message = `Invalid arguments for ${tool.name}: ${body}${/[.?!]$/.test(body) ? '' : '.'} Usage: ${tool.usage}`;
  return new AppError(422, 'invalid_arguments', message, { extra: { tool: tool.name, issues: kept, usage: tool.usage } });
}

// A refusal of arguments told as another tool (the name and usage a model was shown for it), leaving out the
// issues of parameters the model was not shown (`hidden`): it could not have set them. When only those
// remain, what it sent does not fit what was set for it, and it is told so.
export function retoldAs(error: AppError, tool: ToolRef, hidden: readonly string[]): AppError {
  if (error.code !== 'invalid_arguments') return error;
  const issues = ((error.extra?.issues ?? []) as ToolArgumentIssue[]).filter(
    (issue) => !hidden.includes(decodeToken(issue.path.split('/')[1] ?? '')),
  );
  const shown: ToolArgumentIssue[] =
    issues.length > 0
      ? issues
      : [
          {
            path: '',
            keyword: 'fixed',
            message: `these arguments do not fit the settings ${tool.name} has here, which it does not show; try other values or another tool`,
          },
        ];
  return invalidArguments(tool, shown);
}

function dedupe(issues: readonly ToolArgumentIssue[]): ToolArgumentIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.keyword}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// AJV errors (allErrors, verbose) -> one issue per real problem, in the order the schema declares the parameters.
export function describeAjvErrors(errors: readonly ErrorObject[], schema: JsonSchema): DescribedIssues {
  const order = isPlainObject(schema.properties) ? Object.keys(schema.properties) : [];
  const rank = (issue: ToolArgumentIssue): number => {
    const index = order.indexOf(decodeToken(issue.path.split('/')[1] ?? ''));
    return index < 0 ? order.length : index;
  };
  const budget = new IssueBudget();
  const issues = describeErrors(errors, schema, budget)
    .map((issue, i) => ({ issue, i, rank: rank(issue) }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map(({ issue }) => issue);
  return { issues, omitted: budget.omitted };
}

// allErrors reports every bad item of a 100,000-item array; describing more than a response shows is wasted work.
class IssueBudget {
  omitted = 0;
  private readonly perParameter = new Map<string, number>();

  take(error: ErrorObject): boolean {
    const end = error.instancePath.indexOf('/', 1);
    const parameter = error.instancePath.slice(1, end < 0 ? undefined : end);
    const used = this.perParameter.get(parameter) ?? 0;
    if (used >= MAX_ISSUES) {
      this.omitted++;
      return false;
    }
    this.perParameter.set(parameter, used + 1);
    return true;
  }
}

// anyOf/oneOf/contains cascades become one issue, or the errors of the alternative the value was evidently meant to be.
function describeErrors(errors: readonly ErrorObject[], schema: JsonSchema, budget: IssueBudget): ToolArgumentIssue[] {
  const absorbed = new Set<number>();
  const groups = new Map<number, number[]>();
  // Branch errors come just before their anyOf/oneOf error, so walking backwards the outermost group claims first.
  for (let i = errors.length - 1; i >= 0; i--) {
    if (absorbed.has(i) || !GROUPING_KEYWORDS.has(errors[i].keyword)) continue;
    const members = claimBranchErrors(errors, i);
    for (const j of members) absorbed.add(j);
    groups.set(i, members);
  }
  const issues: ToolArgumentIssue[] = [];
  errors.forEach((error, i) => {
    if (absorbed.has(i) || !budget.take(error)) return;
    const members = groups.get(i);
    if (members)
      issues.push(
        ...describeGroup(
          error,
          members.map((j) => errors[j]),
          schema,
          budget,
        ),
      );
    else issues.push(...describeError(error, schema));
  });
  return issues;
}

function describeGroup(group: ErrorObject, members: ErrorObject[], root: JsonSchema, budget: IssueBudget): ToolArgumentIssue[] {
  const ctx = contextOf(group);
  const params = group.params as Record<string, unknown>;
  if (group.keyword === 'contains') {
    const atMost = typeof params.maxContains === 'number' && params.minContains === undefined;
    const n = Number(atMost ? params.maxContains : params.minContains);
    const matching = renderSchemaType(ctx.parent.contains, root);
    const bound = `${atMost ? 'at most' : 'at least'} ${n} ${plural(n, 'item')}`;
    const message = `${ctx.subject} must contain ${bound} of type ${matching}`;
    return [ctx.issue(message, matching)];
  }
  const branches = Array.isArray(ctx.parent[group.keyword]) ? (ctx.parent[group.keyword] as unknown[]) : [];
  const expected = [...new Set(branches.map((b) => renderSchemaType(b, root)))].join('|');
  if (Array.isArray(params.passingSchemas)) {
    const message = `${ctx.subject} matches more than one of the allowed forms ${expected}; it must match exactly one`;
    return [ctx.issue(message, expected)];
  }
  const choice = chooseBranch(group, members, branches, root);
  switch (choice.kind) {
    case 'no-shape-fits':
      return [ctx.issue(`${ctx.subject} must be ${expected}, got ${receivedType(group.data, expected)}`, expected)];
    case 'tag-mismatch': {
      const path = childPath(group.instancePath, choice.key);
      const value = ownValue(group.data, choice.key);
      const message = `${subjectOf(path)} ${mustBeOneOf(choice.values)}, got ${quoteValue(value)}`;
      const expected = renderLiterals(choice.values);
      return [{ path, keyword: group.keyword, message, expected, received: previewJson(value) }];
    }
    case 'branch':
      return describeErrors(choice.errors, root, budget);
    case 'undecided':
      return [ctx.issue(`${ctx.subject} does not match any allowed form: ${expected}`, expected)];
  }
}

interface ErrorContext {
  path: string;
  subject: string;
  parent: JsonSchema;
  issue(message: string, expected?: string): ToolArgumentIssue;
}

function contextOf(error: ErrorObject): ErrorContext {
  const named = error.propertyName !== undefined;
  const path = named ? childPath(error.instancePath, error.propertyName!) : error.instancePath;
  const subject = named ? `property name ${quoteValue(error.propertyName)} in ${subjectOf(error.instancePath)}` : subjectOf(path);
  const parent = isPlainObject(error.parentSchema) ? error.parentSchema : {};
  return {
    path,
    subject,
    parent,
    issue: (message, expected) => ({
      path,
      keyword: error.keyword,
      message,
      ...(expected === undefined ? {} : { expected }),
      received: previewJson(error.data),
    }),
  };
}

function describeError(error: ErrorObject, root: JsonSchema): ToolArgumentIssue[] {
  const ctx = contextOf(error);
  const { subject, parent } = ctx;
  const params = error.params as Record<string, unknown>;
  const data = error.data;
  const got = quoteValue(data);
  switch (error.keyword) {
    case 'type': {
      const expected = declaredTypes(parent).join('|') || String(params.type).replace(/,/g, '|');
      return [ctx.issue(`${subject} must be ${expected}, got ${receivedType(data, expected)}`, expected)];
    }
    case 'required':
      return [missingProperty(error, String(params.missingProperty), parent, root)];
    case 'dependencies':
    case 'dependentRequired': {
      const issue = missingProperty(error, String(params.missingProperty), parent, root);
      const property = String(params.property);
      const trigger = error.instancePath === '' ? property : childPath(error.instancePath, property);
      const message = `${issue.message} (required when ${oneLine(trigger)} is given)`;
      return [{ ...issue, keyword: error.keyword, message }];
    }
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return [unknownProperty(error, String(params.additionalProperty ?? params.unevaluatedProperty), parent)];
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return [ctx.issue(`${subject} ${mustBeOneOf(allowed)}, got ${got}`, renderLiterals(allowed))];
    }
    case 'const': {
      const expected = renderLiteral(params.allowedValue);
      return [ctx.issue(`${subject} must be ${expected}, got ${got}`, expected)];
    }
    case 'format': {
      const format = String(params.format);
      const hint = FORMAT_HINTS[format] ? ` (${FORMAT_HINTS[format]})` : '';
      return [ctx.issue(`${subject} must be a valid ${format}${hint}, got ${got}`, format)];
    }
    case 'pattern': {
      const pattern = oneLine(String(params.pattern), 80);
      return [ctx.issue(`${subject} must match the pattern ${pattern}, got ${got}`, `string matching ${pattern}`)];
    }
    case 'minLength':
    case 'maxLength': {
      const n = Number(params.limit);
      const atLeast = error.keyword === 'minLength';
      const bound = `${atLeast ? 'at least' : 'at most'} ${n} ${plural(n, 'character')}`;
      const length = typeof data === 'string' ? codePoints(data) : 0;
      const received = atLeast ? got : `${length} ${plural(length, 'character')}`;
      return [ctx.issue(`${subject} must be ${bound} long, got ${received}`, bound)];
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'formatMinimum':
    case 'formatMaximum':
    case 'formatExclusiveMinimum':
    case 'formatExclusiveMaximum': {
      const bound = `${String(params.comparison)} ${renderLiteral(params.limit)}`;
      return [ctx.issue(`${subject} must be ${bound}, got ${got}`, bound)];
    }
    case 'multipleOf': {
      const expected = `multiple of ${String(params.multipleOf)}`;
      return [ctx.issue(`${subject} must be a ${expected}, got ${got}`, expected)];
    }
    case 'minItems':
    case 'maxItems':
    case 'additionalItems':
    case 'items': {
      const n = Number(params.limit);
      const bound = `${error.keyword === 'minItems' ? 'at least' : 'at most'} ${n} ${plural(n, 'item')}`;
      const count = Array.isArray(data) ? data.length : 0;
      return [ctx.issue(`${subject} must have ${bound}, got ${count}`, bound)];
    }
    case 'minProperties':
    case 'maxProperties': {
      const n = Number(params.limit);
      const atLeast = error.keyword === 'minProperties';
      const bound = `${atLeast ? 'at least' : 'at most'} ${n} ${plural(n, 'property', 'properties')}`;
      const count = isPlainObject(data) ? Object.keys(data).length : 0;
      return [ctx.issue(`${subject} must have ${bound}, got ${count}`, bound)];
    }
    case 'uniqueItems': {
      const [first, second] = [Number(params.i), Number(params.j)].sort((a, b) => a - b);
      const message = `${subject} must not contain duplicates (items ${first} and ${second} are identical)`;
      return [ctx.issue(message, 'unique items')];
    }
    case 'not': {
      const excluded = renderSchemaType(parent.not, root);
      const message = excluded === 'any' ? `${subject} matches a form that is not allowed` : `${subject} must not be ${excluded}`;
      return [ctx.issue(message)];
    }
    case 'false schema':
      return [ctx.issue(`${subject} is not allowed`)];
    case 'if':
    case 'propertyNames':
      // The errors of the `then`/`else` branch or of each bad name are reported on their own.
      return [];
    default:
      return [ctx.issue(`${subject} ${error.message ?? 'is invalid'}`)];
  }
}

function missingProperty(error: ErrorObject, name: string, parent: JsonSchema, root: JsonSchema): ToolArgumentIssue {
  const path = childPath(error.instancePath, name);
  const properties = isPlainObject(parent.properties) ? parent.properties : {};
  const message =
    error.instancePath === '' ? `missing required parameter: ${oneLine(name)}` : `missing required property: ${oneLine(path)}`;
  return {
    path,
    keyword: error.keyword,
    message,
    ...(Object.hasOwn(properties, name) ? { expected: renderSchemaType(properties[name], root) } : {}),
  };
}

function unknownProperty(error: ErrorObject, name: string, parent: JsonSchema): ToolArgumentIssue {
  const path = childPath(error.instancePath, name);
  const allowed = isPlainObject(parent.properties) ? Object.keys(parent.properties) : [];
  const topLevel = error.instancePath === '';
  let message = topLevel ? `unknown parameter: ${oneLine(name)}` : `unknown property: ${oneLine(path)}`;
  const suggestions = suggestNames(name, allowed, 2);
  if (suggestions.length > 0) message += `; did you mean ${orList(suggestions.map((s) => `'${s}'`))}?`;
  // Top-level names are already listed by the usage line; nested objects are not.
  else if (!topLevel && allowed.length === 0) message += ' (no properties are allowed here)';
  else if (!topLevel && allowed.length <= MAX_LISTED_NAMES) message += ` (allowed: ${allowed.join(', ')})`;
  return { path, keyword: error.keyword, message, received: previewJson(ownValue(error.data, name)) };
}

function mustBeOneOf(values: readonly unknown[]): string {
  if (values.length === 1) return `must be ${renderLiteral(values[0])}`;
  const shown = values.slice(0, 12).map((value) => quoteValue(value));
  return `must be one of ${shown.join(', ')}${values.length > shown.length ? ', …' : ''}`;
}

// "got number", but "got string '5'" when a number or boolean was sent quoted, and "got number 1.5" for an integer.
function receivedType(data: unknown, expected: string): string {
  const type = jsonTypeOf(data);
  const wanted = expected.split('|');
  const quotedScalar = type === 'string' && wanted.some((t) => t === 'integer' || t === 'number' || t === 'boolean');
  const fraction = type === 'number' && wanted.includes('integer');
  return quotedScalar || fraction ? `${type} ${quoteValue(data)}` : type;
}

function childPath(path: string, key: string): string {
  return `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function decodeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function subjectOf(path: string): string {
  return path === '' ? 'arguments' : oneLine(path, 120);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

// Counts a surrogate pair once, as AJV does for minLength/maxLength.
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff) count++;
  }
  return count;
}
