/**
 * JSON-schema validation for the auth family's request bodies (every error at once), by the ajv
 * standalone validators that `npm run schemas` compiles from body-schemas.ts into
 * validators.generated.ts: ajv itself is never loaded by the function. A failing body throws
 * ValidationError (422 VALIDATION_FAILED) with details keyed by field ("admin.email" for
 * nested fields), one message per field.
 */
import { ValidationError } from '../errors.js';
import type { Validator as CompiledValidator, SchemaError } from '../registry/index.js';
import type { AuthBodyName } from './body-schemas.js';
import { precompiled } from './validators.generated.js';

export type Validator<T> = (body: unknown) => T;

function fieldOf(error: SchemaError): string {
  const path = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' || error.keyword === 'dependencies') path.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty));
  return path.join('.') || 'body';
}

function messageOf(error: SchemaError): string {
  const params = error.params as Record<string, unknown>;
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

/** The validator of body-schemas.ts's `name` (a missing body is validated as `{}`). */
export function bodyValidator<T>(name: AuthBodyName): Validator<T> {
  const validate = (precompiled as Record<AuthBodyName, { validate: unknown }>)[name].validate as CompiledValidator;
  return (body: unknown): T => {
    const value = body ?? {};
    if (!validate(value)) throw new ValidationError(detailsOf(validate.errors ?? []));
    return value as T;
  };
}
