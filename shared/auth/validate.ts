/**
 * JSON-schema validation for the auth family's request bodies (every error at once), by the ajv
 * standalone validators that `npm run schemas` compiles from body-schemas.ts into
 * validators.generated.ts: ajv itself is never loaded by the function. A failing body throws
 * ValidationError (422 VALIDATION_FAILED) with details keyed by field (shared/schema-details.ts).
 */
import { ValidationError } from '../errors.js';
import type { Validator as CompiledValidator } from '../registry/index.js';
import { detailsOf } from '../schema-details.js';
import type { AuthBodyName } from './body-schemas.js';
import { precompiled } from './validators.generated.js';

export type Validator<T> = (body: unknown) => T;

/** The validator of body-schemas.ts's `name` (a missing body is validated as `{}`). */
export function bodyValidator<T>(name: AuthBodyName): Validator<T> {
  const validate = (precompiled as Record<AuthBodyName, { validate: unknown }>)[name].validate as CompiledValidator;
  return (body: unknown): T => {
    const value = body ?? {};
    if (!validate(value)) throw new ValidationError(detailsOf(validate.errors ?? []));
    return value as T;
  };
}
