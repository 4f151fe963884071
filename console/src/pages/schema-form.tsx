// A form generated from a tool's JSON Schema (its top-level properties). Values are kept as typed text and
// converted on submit; a value that does not convert is sent as written, so the service's own validation
// answers with the message the model would get.
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  items?: JsonSchema;
}

const typeOf = (schema: JsonSchema): string =>
  Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? 'string') : (schema.type ?? 'string');

export function argumentsFrom(schema: JsonSchema, values: Record<string, string | boolean>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = values[name];
    if (value === undefined || value === '') continue;
    const type = typeOf(property);
    if (typeof value === 'boolean') args[name] = value;
    else if (type === 'integer' || type === 'number') args[name] = Number.isFinite(Number(value)) ? Number(value) : value;
    else if (type === 'object' || type === 'array') {
      try {
        args[name] = JSON.parse(value);
      } catch {
        args[name] = value;
      }
    } else args[name] = value;
  }
  return args;
}

export function SchemaForm(props: {
  idPrefix: string;
  schema: JsonSchema;
  values: Record<string, string | boolean>;
  onChange: (values: Record<string, string | boolean>) => void;
}) {
  const properties = Object.entries(props.schema.properties ?? {});
  const required = new Set(props.schema.required ?? []);
  const set = (name: string, value: string | boolean) => props.onChange({ ...props.values, [name]: value });
  if (properties.length === 0) return <p class="hint">This tool takes no arguments.</p>;
  return (
    <>
      {properties.map(([name, property]) => {
        const id = `${props.idPrefix}-arg-${name}`;
        const type = typeOf(property);
        const hintId = property.description ? `${id}-hint` : undefined;
        const label = (
          <label for={id}>
            <code>{name}</code> <span class="type">{type}</span>
            {required.has(name) ? <span class="req"> (required)</span> : null}
          </label>
        );
        const hint = property.description ? (
          <p class="hint" id={hintId}>
            {property.description}
          </p>
        ) : null;
        if (type === 'boolean') {
          return (
            <div class="field" key={name}>
              <label class="inline" for={id}>
                <input
                  id={id}
                  type="checkbox"
                  checked={props.values[name] === true}
                  aria-describedby={hintId}
                  onChange={(e) => set(name, e.currentTarget.checked)}
                />{' '}
                <code>{name}</code>
              </label>
              {hint}
            </div>
          );
        }
        const value = typeof props.values[name] === 'string' ? props.values[name] : '';
        let control;
        if (property.enum) {
          control = (
            <select id={id} value={value} aria-describedby={hintId} onChange={(e) => set(name, e.currentTarget.value)}>
              <option value="">(not set)</option>
              {property.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        } else if (type === 'object' || type === 'array' || name === 'content') {
          control = (
            <textarea
              id={id}
              rows={4}
              value={value}
              aria-describedby={hintId}
              placeholder={type === 'array' ? '["…"]' : type === 'object' ? '{ }' : ''}
              onInput={(e) => set(name, e.currentTarget.value)}
            />
          );
        } else {
          // Numbers stay free text: a wrong value is the model's mistake to try, and the service answers it.
          control = (
            <input
              id={id}
              inputMode={type === 'integer' || type === 'number' ? 'numeric' : undefined}
              value={value}
              aria-describedby={hintId}
              onInput={(e) => set(name, e.currentTarget.value)}
            />
          );
        }
        return (
          <div class="field" key={name}>
            {label}
            {control}
            {hint}
          </div>
        );
      })}
    </>
  );
}
