/**
 * JSON bodies: a body on POST/PATCH/PUT/DELETE must be application/json and a JSON object
 * (arrays and scalars are refused); malformed JSON, a wrong Content-Type, a non-object body or
 * one nested deeper than MAX_JSON_DEPTH all answer 400 INVALID_REQUEST. Routes that take other
 * media (uploads, inbound webhooks) set `rawBody` on their route and read req.rawBody themselves.
 *
 * The depth limit is checked on the text, before JSON.parse, by a loop (no recursion): every
 * later step that walks a body recursively (validation, the stored item, error reports, the
 * response's JSON.stringify) then meets at most MAX_JSON_DEPTH levels, so no input can overflow
 * the stack part-way through a request — after a write, say.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { BadRequestError } from '../errors.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../json-depth.js';
import type { ApiEvent, ApiLambdaContext } from './types.js';

const CSV_BODY_TYPE = /^text\/csv\s*(;|$)/i;
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

export { jsonDepth, MAX_JSON_DEPTH };

export function parseJsonObject(text: string): Record<string, unknown> {
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new BadRequestError(`The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`, { body: `must not nest more than ${MAX_JSON_DEPTH} levels` });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestError('The request body is not valid JSON', { body: 'malformed JSON' });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError('The request body must be a JSON object', { body: 'must be a JSON object' });
  }
  return value as Record<string, unknown>;
}

export function jsonBody(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function parseJsonBody(request) {
      const req = request.context.api!;
      if (req.route.rawBody || !req.rawBody || req.method === 'GET' || req.method === 'OPTIONS') return;
      const contentType = req.headers['content-type'] ?? '';
      // Imports read a CSV body themselves (shared/import/csv.ts).
      if (req.route.csvBody && CSV_BODY_TYPE.test(contentType)) return;
      if (!JSON_TYPE.test(contentType)) {
        throw new BadRequestError('Content-Type must be application/json', { 'Content-Type': 'must be application/json' });
      }
      req.body = parseJsonObject(req.rawBody.toString('utf8'));
    },
  };
}
