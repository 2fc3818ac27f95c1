/**
 * Row-level security of CONTRACT.md, applied in the data layer below every handler:
 * - a public entity's records are readable by anyone (anonymous included); writes stay in the
 *   record's tenant;
 * - otherwise a record is visible only inside its tenant: to everyone there when the entity is
 *   shared, else to its owner and the tenant's admins;
 * - a record that is not visible answers 404 NOT_FOUND (existence is not revealed); one that is
 *   visible but may not be changed by the caller answers 403 FORBIDDEN;
 * - soft-deleted records are visible to nobody.
 * Definition permissions (permissions.create/read/update/delete) are scopes the caller must hold.
 */
import { hasScope } from '../scopes.js';
import type { StoredRecord, Viewer } from '../data/index.js';
import { ForbiddenError, InsufficientPermissionsError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../errors.js';
import type { AuthContext } from '../caller.js';
import { methodsOf, type LoadedEntity, type OperationName, type PermissionName } from '../registry/index.js';

export function isAdmin(auth: AuthContext | undefined): boolean {
  return auth?.user.role === 'admin';
}

export function viewerOf(auth: AuthContext | undefined): Viewer {
  return { tenantId: auth?.tenantId, userId: auth?.user.id, admin: isAdmin(auth) };
}

export function canSee(entity: LoadedEntity, record: StoredRecord, auth: AuthContext | undefined): boolean {
  if (record.deletedAt) return false;
  if (entity.access.public) return true;
  if (!auth || record.tenantId !== auth.tenantId) return false;
  return entity.access.shared || isAdmin(auth) || record.ownerId === auth.user.id;
}

export function canChange(entity: LoadedEntity, record: StoredRecord, auth: AuthContext | undefined): boolean {
  if (!auth || record.deletedAt || record.tenantId !== auth.tenantId) return false;
  return entity.access.shared || isAdmin(auth) || record.ownerId === auth.user.id;
}

export function notFound(entity: LoadedEntity, id: string): NotFoundError {
  return new NotFoundError(`${entity.name} '${id}' not found`);
}

/** The record if the caller may see it, else 404. */
export function visibleOr404(entity: LoadedEntity, record: StoredRecord | undefined, id: string, auth: AuthContext | undefined): StoredRecord {
  if (!record || !canSee(entity, record, auth)) throw notFound(entity, id);
  return record;
}

/** The record if the caller may change it: 404 when not visible, 403 when visible but not theirs to change. */
export function changeableOr404(entity: LoadedEntity, record: StoredRecord | undefined, id: string, auth: AuthContext | undefined): StoredRecord {
  visibleOr404(entity, record, id, auth);
  if (!canChange(entity, record!, auth)) throw new ForbiddenError(`This ${entity.name} belongs to another tenant or user`);
  return record!;
}

/** 405 when the definition turns the operation off. */
export function requireOperation(entity: LoadedEntity, operation: OperationName): void {
  if (!entity.operations[operation]) {
    throw new MethodNotAllowedError(`The ${operation} operation is disabled for ${entity.slug}`, methodsOf(entity));
  }
}

/** The definition's scopes for this operation (none for reads of a public entity). */
export function requirePermission(entity: LoadedEntity, permission: PermissionName, auth: AuthContext | undefined): void {
  if (permission === 'read' && entity.access.public) return;
  if (!auth) throw new UnauthorizedError();
  for (const scope of entity.permissions[permission]) {
    if (!hasScope(auth.scopes, scope)) throw new InsufficientPermissionsError(scope);
  }
}

/** Writes always need a caller. */
export function requireCaller(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new UnauthorizedError();
  return auth;
}
