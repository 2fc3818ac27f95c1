/**
 * The keys family: API key management under /api/v1/keys (bare scopes read/write/delete) and
 * /api/v1/api-keys (entity:action, entity:*, `*` for admins), session only (routes' auth
 * 'session'). Thin: every decision is in shared/auth/key-management.ts, loaded (with the AWS
 * SDK) on first use.
 */
import type { CreateKeyInput } from '../../shared/auth/key-management.js';
import type { ScopeFamily } from '../../shared/auth/scope-catalog.js';
import { BadRequestError } from '../../shared/errors.js';
import type { ApiRequest, FamilyOperations, Operation, Reply } from '../../shared/http/types.js';
import { createApiHandler, type StackOptions } from '../../shared/http/stack.js';
import { apiPath } from '../../shared/http/urls.js';

const V1 = '/api/v1';
const NO_STORE = { 'Cache-Control': 'no-store' };

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1' || value === '') return true;
  throw new BadRequestError(`${name} must be true or false`, { [name]: 'must be true or false' });
}

function limitOf(value: string | undefined): number {
  if (value === undefined) return 100;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new BadRequestError('limit must be a positive integer', { limit: 'must be a positive integer' });
  return Math.min(n, 100);
}

/** Which scope vocabulary a route takes: bare actions under /keys, entity scopes under /api-keys. */
function familyOf(path: string): ScopeFamily {
  return path.startsWith(`${V1}/keys`) ? 'keys' : 'api-keys';
}

async function loadOperations() {
  const [{ createKey, getKey, keyBodyProblems, listAudit, listKeys, revokeKey, updateKey, KEY_WARNING }, { precompiled: bodies }] = await Promise.all([
    import('../../shared/auth/key-management.js'),
    import('../../shared/http/bodies/keys.generated.js'),
  ]);

  const list: Operation = async (req) => ({
    headers: NO_STORE,
    data: await listKeys(req.auth!, { all: flag(req.query.all, 'all'), userId: req.query.userId }),
  });

  function create(family: ScopeFamily): Operation<CreateKeyInput> {
    return async (req: ApiRequest<CreateKeyInput>): Promise<Reply> => {
      const { key, record } = await createKey({ ...req, auth: req.auth! }, req.body, family);
      return { status: 201, headers: NO_STORE, data: { ...record, key }, warning: KEY_WARNING };
    };
  }

  function revoke(param: string): Operation {
    return async (req) => {
      const result = await revokeKey({ ...req, auth: req.auth! }, req.params[param]);
      return { status: 200, data: result, message: 'API key revoked' };
    };
  }

  const operations: FamilyOperations<'keys'> = {
    listKeys: list,
    createKey: create('keys'),
    revokeKey: revoke('keyId'),

    listApiKeys: list,
    createApiKey: create('api-keys'),
    getApiKey: async (req) => ({ headers: NO_STORE, data: await getKey(req.auth!, req.params.id) }),
    updateApiKey: async (req) => ({ data: await updateKey({ ...req, auth: req.auth! }, req.params.id, req.body) }),
    revokeApiKey: revoke('id'),
    listApiKeyAudit: async (req) => {
      const { entries, nextCursor } = await listAudit(req.auth!, req.params.id, limitOf(req.query.limit), req.query.cursor);
      const headers: Record<string, string> = { ...NO_STORE };
      if (nextCursor) headers.Link = `<${apiPath(req, req.path)}?cursor=${nextCursor}${req.query.limit ? `&limit=${limitOf(req.query.limit)}` : ''}>; rel="next"`;
      return { headers, data: entries };
    },
  };
  // The bodies are checked against their declarations by the stack; the scope hint and the
  // domain's checks join a refused body's answer.
  const options: StackOptions = {
    bodies,
    bodyProblems: (req, refused) => keyBodyProblems((req.body ?? {}) as Record<string, unknown>, familyOf(req.route.path), refused) as Promise<Record<string, string>>,
  };
  return { operations, options };
}

export const handler = createApiHandler(loadOperations);
