/**
 * A failed JSON Schema check as the API answers it: details keyed by field ("admin.email" for a
 * nested field, the array's own name for one of its items), one message per field. Shared by the
 * auth bodies' validators and the route bodies the middleware stack validates
 * (shared/http/validate-body.ts).
 */
/** What ajv reports for one failed check (the subset of its ErrorObject read here). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldOf(error: SchemaError): string {
  const path = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  // An item of an array is a problem of the array's field (scopes, events), as the API names it.
  const item = path.findIndex((segment) => /^\d+$/.test(segment));
  if (item >= 0) return path.slice(0, item).join('.') || 'body';
  const params = error.params;
  if (error.keyword === 'required' || error.keyword === 'dependencies') path.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty));
  return path.join('.') || 'body';
}

function messageOf(error: SchemaError): string {
  const params = error.params;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'dependencies':
      return `is required with ${String(params.property)}`;
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'type':
      return `must be ${/^[aeiou]/.test(String(params.type)) ? 'an' : 'a'} ${String(params.type)}`;
    case 'minLength':
      return `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minItems':
      return `must have at least ${String(params.limit)} ${params.limit === 1 ? 'item' : 'items'}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'format':
      return params.format === 'email' ? 'must be a valid email address' : `must be a valid ${String(params.format)}`;
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'minProperties':
      return 'at least one field is required';
    case 'maxProperties':
      return `at most ${String(params.limit)} fields are allowed`;
    case 'pattern':
      return params.pattern === '\\S' ? 'must not be blank' : 'has an invalid format';
    default:
      return error.message ?? 'is invalid';
  }
}

/** Details keyed by field, the first message for each field. */
export function detailsOf(errors: readonly SchemaError[]): Record<string, string> {
  const details: Record<string, string> = {};
  for (const error of errors) {
    const field = fieldOf(error);
    details[field] ??= messageOf(error);
  }
  return details;
}
