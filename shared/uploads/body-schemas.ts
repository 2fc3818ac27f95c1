/**
 * The JSON schemas of the presigned flow's request bodies, plain data: the route declarations
 * (shared/route-declarations/upload.ts) name them, the middleware stack checks a body with the
 * validators `npm run schemas` compiles from them, and the service takes its input types from
 * them. What a schema cannot say (the type is allowed, the size within the limit) the service checks.
 */
export const uploadBodySchemas = {
  presign: {
    type: 'object',
    required: ['filename', 'type', 'size'],
    properties: { filename: { type: 'string', minLength: 1, maxLength: 1024, pattern: '\\S' }, type: { type: 'string', minLength: 1 }, size: { type: 'integer', minimum: 1 } },
  },
  complete: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, description: 'The key /api/v1/upload/presign returned.' } } },
} as const;
