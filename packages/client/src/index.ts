/**
 * A typed client of the Entity Record API: openapi-fetch over the types openapi-typescript
 * generates from the API's OpenAPI document (src/schema.generated.ts). Paths, parameters, bodies and
 * answers are checked by the compiler.
 */
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.generated.js';

export type { components, operations, paths, webhooks } from './schema.generated.js';

/** The schemas of the document: records (`Schemas['Task']`), create and update bodies, errors. */
export type Schemas = components['schemas'];

export type ApiClient = Client<paths>;

export interface ApiClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The deployment's base URL, e.g. http://127.0.0.1:3000 (no /api/v1). */
  baseUrl: string;
  /** An API key (sk_live_… / sk_test_…), sent as `Authorization: Bearer`. */
  apiKey?: string;
}

export function createClient({ baseUrl, apiKey, headers, ...rest }: ApiClientOptions): ApiClient {
  return createFetchClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...(headers as Record<string, string> | undefined) },
    ...rest,
  });
}
