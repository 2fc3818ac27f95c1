/**
 * The HTTP layer's front door: the middleware stacks a handler is built with and the types of a
 * request and its reply. Only the places where HTTP meets the domain import shared/http/ (the
 * route declarations, shared/openapi/, shared/graphql/ and the handlers in functions/).
 */
export { createApiHandler, withOperations, type Operations, type OperationsLoader, type StackOptions } from './stack.js';
export { createPublicHandler } from './public-stack.js';
export type { ApiEvent, ApiLambdaContext, ApiRequest, Operation, Reply } from './types.js';
