// Any JSON value, spelled out for the OpenAPI document: without a schema @nestjs/swagger would write
// `type: object` for an `unknown` property, which is false for a tool result or arguments sent as a string.
export const JSON_VALUE_SCHEMA = {
  anyOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
  ],
};
