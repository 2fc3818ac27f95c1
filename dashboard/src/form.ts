/**
 * Forms generated from an entity's OPTIONS description (SPEC.md "Entity description"): one input
 * per writable field, with the constraints the server enforces (required, enum, bounds,
 * maxLength, pattern) and relations as pickers of the related entity's records. Pure: the
 * editor renders what these functions return, and unit tests check them without a browser.
 */

export interface FieldDescriptor {
  type: string;
  required?: boolean;
  generated?: boolean;
  primaryKey?: boolean;
  maxLength?: number;
  values?: string[];
  default?: unknown;
  validation?: { min?: number; max?: number; pattern?: string };
  items?: { type: string };
  references?: string;
  /** No two live records hold the same value. */
  unique?: boolean;
}

export interface RelationDescriptor {
  type: string;
  entity: string;
  foreignKey: string;
}

export interface EntityDescription {
  entity: string;
  slug: string;
  methods: string[];
  schema: Record<string, FieldDescriptor>;
  relations: Record<string, RelationDescriptor>;
  permissions: { read: boolean; write: boolean; delete: boolean };
  rateLimit?: { limit: number; window: string };
}

export type InputKind = 'text' | 'textarea' | 'number' | 'select' | 'checkbox' | 'datetime' | 'date' | 'relation' | 'relations';

export interface FormField {
  name: string;
  kind: InputKind;
  required: boolean;
  /** enum values (select). */
  options?: string[];
  min?: number;
  max?: number;
  maxLength?: number;
  pattern?: string;
  /** The entity whose records a relation picker offers. */
  relatedEntity?: string;
  default?: unknown;
}

/** Text longer than this gets a text area. */
const LONG_TEXT = 500;

/** The related entity of a field: its own `references`, or the relation whose foreign key it is. */
function relatedEntityOf(name: string, descriptor: FieldDescriptor, relations: Record<string, RelationDescriptor>): string | undefined {
  if (descriptor.references) return descriptor.references;
  const relation = Object.values(relations).find((r) => r.foreignKey === name && (r.type === 'belongsTo' || r.type === 'manyToMany'));
  return relation?.entity;
}

export function formField(name: string, d: FieldDescriptor, relations: Record<string, RelationDescriptor> = {}): FormField {
  const base = { name, required: d.required === true, ...(d.default !== undefined ? { default: d.default } : {}) };
  const related = relatedEntityOf(name, d, relations);
  if (d.type === 'array') return { ...base, kind: 'relations', ...(related ? { relatedEntity: related } : {}) };
  if (related) return { ...base, kind: 'relation', relatedEntity: related, ...(d.maxLength !== undefined ? { maxLength: d.maxLength } : {}) };
  switch (d.type) {
    case 'enum':
      return { ...base, kind: 'select', options: [...(d.values ?? [])] };
    case 'number':
      return {
        ...base,
        kind: 'number',
        ...(d.validation?.min !== undefined ? { min: d.validation.min } : {}),
        ...(d.validation?.max !== undefined ? { max: d.validation.max } : {}),
      };
    case 'boolean':
      return { ...base, kind: 'checkbox' };
    case 'datetime':
      return { ...base, kind: 'datetime' };
    case 'date':
      return { ...base, kind: 'date' };
    default: {
      // A string's length bound is the smaller of maxLength and validation.max (as the server checks it).
      const bounds = [d.maxLength, d.validation?.max].filter((n): n is number => n !== undefined);
      const maxLength = bounds.length ? Math.min(...bounds) : undefined;
      return {
        ...base,
        kind: maxLength !== undefined && maxLength > LONG_TEXT ? 'textarea' : 'text',
        ...(maxLength !== undefined ? { maxLength } : {}),
        ...(d.validation?.pattern !== undefined ? { pattern: d.validation.pattern } : {}),
      };
    }
  }
}

/** The inputs of the create and edit forms: every field but the generated ones, in schema order. */
export function formFields(description: EntityDescription): FormField[] {
  return Object.entries(description.schema)
    .filter(([, d]) => !d.generated && !d.primaryKey)
    .map(([name, d]) => formField(name, d, description.relations));
}

/**
 * The columns of a record: every field of the description in its order (id, the fields, the
 * relation id lists, the times). The table's default columns, and the export's, which are those
 * of the admin CLI's export (`npm run admin -- export`).
 */
export function columns(description: EntityDescription): string[] {
  return Object.keys(description.schema);
}

/** Form values as the inputs hold them: strings, booleans for check boxes, string lists for multi-pickers. */
export type FormValue = string | boolean | string[];
export type FormValues = Record<string, FormValue>;

/** What an input shows for a record's value (or the default on a new record). */
export function initialValues(fields: FormField[], record?: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    const v = record ? record[f.name] : f.default;
    if (f.kind === 'checkbox') values[f.name] = v === true;
    else if (f.kind === 'relations') values[f.name] = Array.isArray(v) ? v.map(String) : [];
    else if (f.kind === 'datetime' && typeof v === 'string') values[f.name] = v.slice(0, 16);
    else values[f.name] = v === undefined || v === null ? '' : String(v);
  }
  return values;
}

function converted(field: FormField, value: FormValue): unknown {
  if (field.kind === 'checkbox' || field.kind === 'relations') return value;
  const text = String(value);
  if (field.kind === 'number') return text.trim() === '' ? undefined : Number(text);
  if (field.kind === 'datetime') return text === '' ? undefined : new Date(text).toISOString();
  return text === '' ? undefined : text;
}

/**
 * The request body of a create (every filled-in field) or an update (only what changed from
 * `original`; a cleared field is sent as null). Numbers are sent as numbers, so the server's
 * own validation (422 with details) judges them, never the form alone.
 */
export function toBody(fields: FormField[], values: FormValues, original?: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    const value = values[f.name];
    if (value === undefined) continue;
    if (original) {
      if (JSON.stringify(value) === JSON.stringify(original[f.name])) continue;
      const v = converted(f, value);
      body[f.name] = v === undefined ? null : v;
    } else {
      const v = converted(f, value);
      if (v === undefined || (Array.isArray(v) && v.length === 0) || (f.kind === 'checkbox' && v === false && f.default === undefined)) continue;
      body[f.name] = v;
    }
  }
  return body;
}

/** The metadata text area's content as a JSON object; a message when it is not one. */
export function parseMetadata(text: string): { value?: Record<string, unknown>; error?: string } {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'must be a JSON object' };
    return { value: value as Record<string, unknown> };
  } catch (e) {
    return { error: `is not valid JSON (${(e as Error).message})` };
  }
}
