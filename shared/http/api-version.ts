/**
 * Versioning: X-API-Version absent or a supported version passes, anything else is a 400 naming
 * the supported versions. A version configured as deprecated (API_DEPRECATIONS) gets
 * Deprecation, Sunset and Link rel=deprecation headers.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../config.js';
import { BadRequestError } from '../errors.js';
import type { ApiEvent, ApiLambdaContext } from './types.js';

function versionOfPath(path: string): string | undefined {
  return /^\/api\/(v\d+)(\/|$)/.exec(path)?.[1];
}

export function apiVersion(): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, ApiLambdaContext> {
  return {
    before: function checkApiVersion(request) {
      const req = request.context.api!;
      const { apiVersions, deprecations } = config();
      const requested = req.headers['x-api-version'];
      const pathVersion = versionOfPath(req.path);
      if (requested !== undefined && (!apiVersions.includes(requested) || (pathVersion && requested !== pathVersion))) {
        throw new BadRequestError(`Unsupported API version '${requested}'; supported: ${apiVersions.join(', ')}`, {
          'X-API-Version': `must be one of: ${apiVersions.join(', ')}${pathVersion ? ` (and match the path's ${pathVersion})` : ''}`,
        });
      }
      const deprecation = pathVersion ? deprecations[pathVersion] : undefined;
      if (deprecation) {
        req.responseHeaders.Deprecation = 'true';
        if (deprecation.sunset) req.responseHeaders.Sunset = deprecation.sunset;
        if (deprecation.link) req.responseHeaders.Link = `<${deprecation.link}>; rel="deprecation"`;
      }
    },
  };
}
