import { describe, expect, it } from 'vitest';
import { entityRateLimit } from '../../../../shared/http/operations/entities.js';
import { countersFor } from '../../../../shared/http/rate-limit.js';
import type { ApiRequest } from '../../../../shared/http/types.js';
import { useDefinitions } from '../../../../shared/registry/index.js';
import { findRoute } from '../../../../shared/routes.js';

const base = {
  fields: { name: { type: 'string', required: true } },
  permissions: {},
  access: { public: false, shared: true },
  operations: { list: true, create: true, read: true, update: true, delete: true },
  softDelete: false,
  relations: {},
  idFormat: { type: 'uuid' },
};

function requestFor(entity: string): ApiRequest {
  return {
    params: { entity },
    route: findRoute('GET', '/api/v1/{entity}')!,
    ip: '203.0.113.9',
    auth: { type: 'session', user: { id: 'usr_1', email: 'a@b.c', role: 'user' }, tenantId: 'ten_1', scopes: ['read'] },
  } as unknown as ApiRequest;
}

describe("an entity's own rate limit", () => {
  useDefinitions([
    { ...base, name: 'widget', slug: 'widgets', tableName: 'widgets', rateLimit: { limit: 30, window: '1m' } },
    { ...base, name: 'gadget', slug: 'gadgets', tableName: 'gadgets' },
  ]);

  it('is counted per caller beside the general limit', () => {
    const counters = countersFor(requestFor('widgets'), { rateLimitFor: entityRateLimit });

    expect(counters.map((c) => [c.subject, c.limit, c.windowSeconds])).toEqual([
      ['u:usr_1', 100, 3600],
      ['r:entity:widgets#u:usr_1', 30, 60],
    ]);
  });

  it('adds no counter for an entity without one, nor for an unknown entity', () => {
    expect(countersFor(requestFor('gadgets'), { rateLimitFor: entityRateLimit })).toHaveLength(1);
    expect(countersFor(requestFor('nothing'), { rateLimitFor: entityRateLimit })).toHaveLength(1);
  });
});
