import { afterEach, describe, expect, it } from 'vitest';
import { hasScope } from '../../../shared/scopes.js';
import { knownResources, scopeProblem, setEntitySource } from '../../../shared/auth/scope-catalog.js';

const resources = new Set(['tasks', 'products', 'orders', 'tags', 'uploads', 'webhooks', 'ai']);

afterEach(() => setEntitySource(undefined));

describe('scope semantics', () => {
  it('write covers create and update (the write scope), not read or delete', () => {
    expect(hasScope(['tasks:write'], 'tasks:write')).toBe(true);
    expect(hasScope(['tasks:write'], 'tasks:read')).toBe(false);
    expect(hasScope(['tasks:write'], 'tasks:delete')).toBe(false);
  });

  it('read is view only and delete is delete only', () => {
    expect(hasScope(['tasks:read'], 'tasks:write')).toBe(false);
    expect(hasScope(['tasks:delete'], 'tasks:read')).toBe(false);
    expect(hasScope(['tasks:delete'], 'tasks:delete')).toBe(true);
  });

  it('entity:* covers every action on that entity only', () => {
    expect(hasScope(['tasks:*'], 'tasks:delete')).toBe(true);
    expect(hasScope(['tasks:*'], 'products:read')).toBe(false);
  });

  it('* covers everything', () => {
    expect(hasScope(['*'], 'webhooks:write')).toBe(true);
  });

  it('bare read, write, delete mean that action on every entity and system resource', () => {
    expect(hasScope(['read'], 'orders:read')).toBe(true);
    expect(hasScope(['write'], 'uploads:write')).toBe(true);
    expect(hasScope(['read'], 'orders:write')).toBe(false);
  });
});

describe('scopeProblem', () => {
  it('accepts only the bare words in the /keys family', () => {
    for (const scope of ['read', 'write', 'delete']) expect(scopeProblem(scope, 'keys', resources)).toBeUndefined();
    expect(scopeProblem('tasks:read', 'keys', resources)).toMatch(/unknown scope/);
    expect(scopeProblem('*', 'keys', resources)).toMatch(/unknown scope/);
  });

  it('accepts entity:action, entity:*, * and the bare words in the /api-keys family', () => {
    for (const scope of ['tasks:read', 'products:write', 'orders:delete', 'tags:*', '*', 'read', 'webhooks:write', 'uploads:write', 'ai:write']) {
      expect(scopeProblem(scope, 'api-keys', resources)).toBeUndefined();
    }
  });

  it('names an unknown entity, action or form', () => {
    expect(scopeProblem('widgets:read', 'api-keys', resources)).toMatch(/unknown entity 'widgets'/);
    expect(scopeProblem('tasks:admin', 'api-keys', resources)).toMatch(/unknown action 'admin'/);
    expect(scopeProblem('tasks', 'api-keys', resources)).toMatch(/unknown scope/);
    expect(scopeProblem('tasks:read:x', 'api-keys', resources)).toMatch(/unknown scope/);
    expect(scopeProblem('Tasks:read', 'api-keys', resources)).toMatch(/unknown scope/);
    expect(scopeProblem(42, 'api-keys', resources)).toMatch(/non-empty string/);
  });

  it("knows the registry's entities and the system resources", async () => {
    const known = await knownResources();

    for (const name of ['tasks', 'products', 'comments', 'tags', 'orders', 'customers', 'uploads', 'webhooks', 'ai']) expect(known.has(name)).toBe(true);
  });

  it('follows another entity source', async () => {
    setEntitySource(() => ['widgets']);
    const known = await knownResources();

    expect(scopeProblem('widgets:read', 'api-keys', known)).toBeUndefined();
    expect(scopeProblem('tasks:read', 'api-keys', known)).toMatch(/unknown entity/);
  });
});
