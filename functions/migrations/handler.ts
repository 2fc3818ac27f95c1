/**
 * The migrations family: GET /api/v1/migrations, each entity's layout and migration state, for the
 * platform operator (the bootstrap admin) only. Thin: shared/migrations/status.ts decides.
 */
import type { ApiRequest, FamilyOperations, Reply } from '../../shared/http/types.js';
import { createApiHandler } from '../../shared/http/stack.js';

async function loadOperations() {
  const [{ isOperator }, { migrationStatus }, { allEntities, loadRegistry }, { ForbiddenError }] = await Promise.all([
    import('../../shared/auth/bootstrap.js'),
    import('../../shared/migrations/status.js'),
    import('../../shared/registry/index.js'),
    import('../../shared/errors.js'),
  ]);
  await loadRegistry();
  async function list(req: ApiRequest): Promise<Reply> {
    const caller = req.auth;
    if (!caller || caller.type !== 'session' || !(await isOperator(caller.user, caller.tenantId))) {
      throw new ForbiddenError('Only the platform operator can see migrations');
    }
    return { data: await migrationStatus(allEntities()), headers: { 'Cache-Control': 'no-store' } };
  }
  const operations: FamilyOperations<'migrations'> = { listMigrations: list };
  return { operations };
}

export const handler = createApiHandler(loadOperations);
