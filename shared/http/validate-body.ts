/**
 * The request body checked against the route's declared schema (`body` of its declaration, shared/route-declarations/),
 * by the precompiled validators the family passes (`bodies`, shared/http/bodies/*.generated.ts):
 * the very schema the API description shows is the one that refuses a body, with 422
 * VALIDATION_FAILED and details keyed by field. A missing body is checked as `{}`.
 *
 * What a schema cannot say (a scope names an entity, a URL resolves to a public address) the
 * services check. When the schema already refuses the body, the family's `bodyProblems` adds
 * those checks for the fields the schema let through (and may word a refused field its own way,
 * as the keys family does for scopes), so one answer names every field.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ValidationError } from '../errors.js';
import type { SchemaError } from '../schema-details.js';
import type { ApiEvent, ApiLambdaContext, ApiRequest } from './types.js';

/** A precompiled validator: `errors` are set after a failed call. */
interface CompiledValidator {
  (data: unknown): boolean;
  errors?: SchemaError[] | null;
}

/** The `precompiled` table of a generated module: the route's operation name → {schema (its JSON), validate}. */
export type BodyValidators = Readonly<Record<string, { readonly schema: string; readonly validate: unknown }>>;

export interface BodyValidationOptions {
  /** The precompiled validators of the family's declared bodies, by the routes' operation names. */
  bodies?: BodyValidators;
  /**
   * The domain's problems with a body the schema refused (`found`: the schema's details), for the
   * fields the schema let through, or in the domain's own words for one it refused: merged into
   * the one 422 answer, the domain's words first.
   */
  bodyProblems?: (req: ApiRequest, found: Readonly<Record<string, string>>) => Promise<Record<string, string>>;
}

export function validateBody(options: BodyValidationOptions): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: async function validateDeclaredBody(request) {
      const req = request.context.api!;
      const bodies = options.bodies;
      const check = bodies && Object.hasOwn(bodies, req.route.operation) ? bodies[req.route.operation] : undefined;
      if (!check) return;
      const validate = check.validate as CompiledValidator;
      if (validate(req.body ?? {})) return;
      // The wording of the details loads with the first refused body, not with every cold start.
      const { detailsOf } = await import('../schema-details.js');
      const details = detailsOf(validate.errors ?? []);
      const more = options.bodyProblems ? await options.bodyProblems(req, details) : {};
      throw new ValidationError({ ...details, ...more });
    },
  };
}
