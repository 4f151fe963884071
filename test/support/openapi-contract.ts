import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// Checks answers against the OpenAPI 3.1 document the app publishes: the status must be one the operation
// declares, the media type one it declares for that status, and the body must fit its schema. The schemas
// are compiled with AJV's JSON Schema 2020-12 dialect (the document's own), closed: an object schema with
// `properties` and no `additionalProperties` admits no other property here, so a field the service sends
// and the document does not name fails the check.

export interface OpenApiOperation {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: unknown }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown> };
}

export interface OperationRef {
  method: string;
  path: string;
  operation: OpenApiOperation;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  text?: string;
}

const DOCUMENT_ID = 'https://toolgate.invalid/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

// A copy of a schema with its component references pointing into the registered document, and every
// object schema with listed properties closed to others.
function prepare(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((item) => prepare(item));
  if (!isObject(schema)) return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
      copy.$ref = `${DOCUMENT_ID}#/$defs/${value.slice('#/components/schemas/'.length)}`;
    } else if (key === 'properties' || key === 'patternProperties' || key === '$defs') {
      copy[key] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, prepare(sub)]));
    } else if (
      key === 'examples' ||
      key === 'default' ||
      key === 'enum' ||
      key === 'const' ||
      key === 'required' ||
      key === 'description'
    ) {
      copy[key] = value;
    } else {
      copy[key] = prepare(value);
    }
  }
  if (isObject(copy.properties) && copy.additionalProperties === undefined && copy.unevaluatedProperties === undefined) {
    copy.additionalProperties = false;
  }
  return copy;
}

export class OpenApiContract {
  readonly operations = new Map<string, OperationRef>();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, $defs: prepare(document.components.schemas) as Json });
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        // Keyed by id: a second operation with the same id would hide the first from every check.
        if (this.operations.has(operation.operationId)) throw new Error(`operationId ${operation.operationId} is used twice`);
        this.operations.set(operation.operationId, { method, path, operation });
      }
    }
  }

  operation(operationId: string): OperationRef {
    const found = this.operations.get(operationId);
    if (!found) throw new Error(`the document has no operation ${operationId}`);
    return found;
  }

  // The problems of one answer, as readable lines; empty when it fits the document.
  problemsOfAnswer(operationId: string, answer: Answer): string[] {
    const { operation } = this.operation(operationId);
    const declared = operation.responses[String(answer.status)];
    if (!declared) return [`status ${answer.status} is not declared (declared: ${Object.keys(operation.responses).join(', ')})`];
    const contentType = String(answer.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const content = declared.content ?? {};
    if (Object.keys(content).length === 0) {
      const empty = answer.text === undefined || answer.text === '';
      return empty ? [] : [`status ${answer.status} declares no body, got ${contentType}: ${answer.text?.slice(0, 200)}`];
    }
    const media = content[contentType];
    if (!media)
      return [`status ${answer.status}: media type '${contentType}' is not declared (declared: ${Object.keys(content).join(', ')})`];
    const body = contentType === 'application/json' ? answer.body : answer.text;
    return this.problemsOf(`${operationId} ${answer.status} ${contentType}`, media.schema, body);
  }

  // The problems of a request body against the operation's request schema: what the document lets a client
  // send must be what the service takes (it refuses unknown properties too, so closed schemas fit requests).
  problemsOfRequest(operationId: string, body: unknown): string[] {
    const content = this.operation(operationId).operation.requestBody?.content;
    const media = content?.['application/json'] ?? content?.['application/x-www-form-urlencoded'];
    if (!media) return ['the operation declares no JSON or form request body'];
    return this.problemsOf(`${operationId} request`, media.schema, body);
  }

  private problemsOf(key: string, schema: unknown, value: unknown): string[] {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(prepare(schema ?? {}) as Json);
      this.validators.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)} (schema ${e.schemaPath})`,
    );
  }
}
