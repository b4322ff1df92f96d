import { el, jsonText } from './dom';
import type { JsonSchema } from './records';

/** A form generated from a JSON Schema, and how to read the value it describes. */
export interface SchemaForm {
  fields: HTMLElement;
  /** The value, or undefined when the browser's checks fail (it then shows the first problem). */
  read: (form: HTMLFormElement) => Record<string, unknown> | undefined;
}

interface Field {
  name: string;
  read: () => unknown;
}

/**
 * Fields for an object schema's properties: text for strings, number inputs for numbers and
 * integers, a checkbox for booleans, a select for enums, JSON text for anything else; `required`,
 * `default`, bounds and patterns become the inputs' own checks, so the browser validates before
 * the service does again. A schema that is not an object with properties is one JSON field.
 */
export function schemaForm(schema: JsonSchema | undefined): SchemaForm {
  const properties = schema?.properties as Record<string, JsonSchema> | undefined;
  if (schema?.type !== 'object' && !properties) return wholeValueForm(schema);
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  const fields = Object.entries(properties ?? {}).map(([name, property]) => field(name, property, required.has(name)));
  return {
    fields: el('div', { class: 'fields' }, ...fields.map(({ view }) => view)),
    read: (form) => {
      if (!form.reportValidity()) return undefined;
      const value: Record<string, unknown> = {};
      for (const field of fields) {
        const fieldValue = field.read();
        if (fieldValue !== undefined) value[field.name] = fieldValue;
      }
      return value;
    },
  };
}

function field(name: string, schema: JsonSchema, required: boolean): Field & { view: HTMLElement } {
  const id = `field-${name}-${Math.random().toString(36).slice(2)}`;
  const label = el(
    'label',
    { for: id },
    (schema.title as string | undefined) ?? name,
    required ? ' *' : '',
    typeof schema.description === 'string' ? el('small', {}, ` ${schema.description}`) : null,
  );
  const input = inputFor(id, name, schema, required);
  return { name, view: el('div', { class: 'field' }, label, input.element), read: input.read };
}

function inputFor(
  id: string,
  name: string,
  schema: JsonSchema,
  required: boolean,
): { element: HTMLElement; read: () => unknown } {
  const fallback = schema.default;
  if (Array.isArray(schema.enum)) {
    const options = schema.enum as unknown[];
    const select = el(
      'select',
      { id, name, required },
      required ? null : el('option', { value: '' }, '—'),
      ...options.map((option, index) =>
        el('option', { value: String(index), selected: option === fallback }, String(option)),
      ),
    );
    return { element: select, read: () => (select.value === '' ? undefined : options[Number(select.value)]) };
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type;
  if (type === 'boolean') {
    const box = el('input', { id, name, type: 'checkbox', checked: fallback === true });
    return { element: box, read: () => box.checked };
  }
  if (type === 'number' || type === 'integer') {
    const input = el('input', {
      id,
      name,
      type: 'number',
      required,
      step: type === 'integer' ? '1' : 'any',
      min: schema.minimum as number | undefined,
      max: schema.maximum as number | undefined,
      value: typeof fallback === 'number' ? fallback : undefined,
    });
    return { element: input, read: () => (input.value === '' ? undefined : Number(input.value)) };
  }
  if (type === 'string') {
    const input = el('input', {
      id,
      name,
      type: 'text',
      required,
      minlength: schema.minLength as number | undefined,
      maxlength: schema.maxLength as number | undefined,
      pattern: typeof schema.pattern === 'string' ? schema.pattern : undefined,
      value: typeof fallback === 'string' ? fallback : undefined,
    });
    return { element: input, read: () => (input.value === '' && !required ? undefined : input.value) };
  }
  return jsonInput(id, name, required, fallback);
}

/** JSON text, checked as it is typed. */
function jsonInput(id: string, name: string, required: boolean, fallback: unknown) {
  const area = el('textarea', { id, name, required, rows: 3 }, fallback === undefined ? '' : jsonText(fallback));
  const parse = (): unknown => (area.value.trim() === '' ? undefined : JSON.parse(area.value));
  area.addEventListener('input', () => {
    try {
      parse();
      area.setCustomValidity('');
    } catch {
      area.setCustomValidity('Not valid JSON');
    }
  });
  return { element: area, read: parse };
}

function wholeValueForm(schema: JsonSchema | undefined): SchemaForm {
  const input = jsonInput(`field-value`, 'value', true, schema?.default ?? {});
  return {
    fields: el('div', { class: 'fields' }, el('label', { for: 'field-value' }, 'Value (JSON)'), input.element),
    read: (form) => (form.reportValidity() ? (input.read() as Record<string, unknown>) : undefined),
  };
}
