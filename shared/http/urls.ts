/**
 * URLs the API hands out (pagination Link, Location, upload URLs) that work wherever the API is
 * reached: on API Gateway's default endpoint (`https://<id>.execute-api.<region>.amazonaws.com/prod/...`,
 * the stage in the URL), behind a custom domain with a base path mapping
 * (`https://api.example.com/v2/...`), on a custom domain without one, and locally
 * (`http://127.0.0.1:3000/...`).
 *
 * The route table knows the API's own paths (`/api/v1/tasks`); what the client put before them
 * is the base path. API Gateway's REST proxy event gives the path the client requested in
 * requestContext.path (stage or mapping included), while `event.path` drops the stage and, behind
 * a custom domain, may or may not keep the mapping's base path. The matched resource
 * (`/api/v1/{entity}`) has as many segments as the API's own path, so the base path is what
 * precedes the last that-many segments of the requested path — whichever form the event takes.
 */
import type { ApiEvent } from './types.js';

export interface RequestBase {
  /** What precedes the API's own paths in the client's URL: '', '/prod', '/v2'... */
  basePath: string;
  /** scheme://host[:port] the client used. */
  origin: string;
  /** The API's own path of this request (as in the route table, parameters filled in), e.g. /api/v1/tasks/tsk_1. */
  appPath: string;
}

function segments(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function header(event: Pick<ApiEvent, 'headers'>, name: string): string | undefined {
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === name && value) return value;
  return undefined;
}

/** The base path, origin and own path of a request, from its proxy event. */
export function requestBase(event: Pick<ApiEvent, 'path' | 'resource' | 'headers' | 'requestContext'>): RequestBase {
  const context = event.requestContext as (ApiEvent['requestContext'] & { domainName?: string }) | undefined;
  const requested = context?.path || event.path;
  const resource = event.resource || context?.resourcePath || event.path;
  const own = segments(resource).length;
  const parts = segments(requested);
  let basePath = '';
  let appPath = event.path;
  // A greedy resource ({proxy+}) has no fixed length: then only a stage prefix can be told apart.
  if (!resource.includes('+}') && parts.length >= own) {
    basePath = parts.length > own ? `/${parts.slice(0, parts.length - own).join('/')}` : '';
    appPath = `/${parts.slice(parts.length - own).join('/')}`;
  } else if (context?.stage && requested.startsWith(`/${context.stage}/`) && !event.path.startsWith(`/${context.stage}/`)) {
    basePath = `/${context.stage}`;
  }
  // API Gateway passes the Host the client used (the custom domain's, behind one) and
  // X-Forwarded-Proto; it serves HTTPS only. The local gateway is plain HTTP.
  const host = header(event, 'host') ?? context?.domainName ?? 'localhost';
  const scheme = header(event, 'x-forwarded-proto')?.split(',')[0].trim() || (context?.domainName ? 'https' : 'http');
  return { basePath, origin: `${scheme}://${host}`, appPath };
}

export { apiPath, apiUrl } from '../urls.js';
