/**
 * An entity's schema at a glance, read-only: its definition as the registry has it and, for the
 * platform operator, its stored layout and migration. The fields, their rules, the relations and
 * the caller's permissions come from OPTIONS (kept for the browser session: no request when the
 * explorer was open); access, indexes, searchable fields, write shards and the migration's state
 * and report from GET /api/v1/migrations, which only the operator may read (one request).
 * Definitions change in code: the page says where that is explained.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, client, unwrap } from '../api.js';
import type { EntityDescription, FieldDescriptor } from '../form.js';
import { href } from '../router.js';
import { describe, entities, me } from '../state.js';
import { ErrorText, Loading, when } from '../ui.js';

interface Migration {
  entity: string;
  layout: {
    hash: string;
    previous?: string;
    access: { public: boolean; shared: boolean };
    softDelete: boolean;
    unique: string[];
    defaults: Record<string, unknown>;
    searchable: string[];
    writeShards?: number;
  };
  state: 'pending' | 'running' | 'done' | 'failed';
  run: number;
  changes: string[];
  processed: number;
  total: number | null;
  /** Records created during the pass that it met too (never counted in processed). */
  added?: number;
  startedAt: string | null;
  endedAt: string | null;
  error: string | null;
  indexes: { field: string; token: string; ready: boolean }[];
  report: { count: number; entries: { kind: 'duplicate' | 'violation'; recordId: string; field: string; detail: string; keptId?: string }[] };
  writeShards?: { auto: boolean; shards: number; read: number };
  trigger?: { action: 'split' | 'merge'; from: number; to: number; reason: string } | null;
}

/** Whether this user may be the platform operator (the bootstrap admin of the default tenant); the API decides. */
const mayBeOperator = () => me.value?.role === 'admin' && me.value.tenantId === 'ten_default';

const CHANGING = 'docs/changing-entities.md';

export function rulesOf(d: FieldDescriptor): string[] {
  return [
    d.maxLength !== undefined ? `at most ${d.maxLength} characters` : '',
    d.values ? `one of ${d.values.join(', ')}` : '',
    d.validation?.min !== undefined ? (d.type === 'number' ? `at least ${d.validation.min}` : `at least ${d.validation.min} characters`) : '',
    d.validation?.max !== undefined ? (d.type === 'number' ? `at most ${d.validation.max}` : `at most ${d.validation.max} characters`) : '',
    d.validation?.pattern ? `matches ${d.validation.pattern}` : '',
    d.unique ? 'unique' : '',
  ].filter(Boolean);
}

function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <article aria-labelledby={`schema-${id}`}>
      <h2 id={`schema-${id}`}>{title}</h2>
      {children}
    </article>
  );
}

function EntityLink({ slug }: { slug: string }) {
  return (entities.value ?? []).includes(slug) ? <a href={href(`${slug}/schema`)}>{slug}</a> : <>{slug}</>;
}

/** What else a field is: the primary key, set by the service, an id (or ids) of another entity's records. */
function notesOf(name: string, d: FieldDescriptor, description: EntityDescription) {
  const relation = Object.entries(description.relations).find(([, r]) => r.foreignKey === name && r.type !== 'hasMany');
  const target = d.references ?? relation?.[1].entity;
  const plain = [d.primaryKey ? 'primary key' : '', d.generated ? 'set by the service' : ''].filter(Boolean).join('; ');
  if (!target) return plain || '—';
  return (
    <>
      {plain ? `${plain}; ` : ''}
      {d.type === 'array' ? 'ids of ' : 'id of a '}
      <EntityLink slug={target} /> {d.type === 'array' ? 'records' : 'record'}
      {relation ? ` (relation ${relation[0]})` : ''}
    </>
  );
}

function Fields({ description }: { description: EntityDescription }) {
  return (
    <div class="table-wrap">
      <table class="striped">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Type</th>
            <th scope="col">Required</th>
            <th scope="col">Rules</th>
            <th scope="col">Default</th>
            <th scope="col">Notes</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(description.schema).map(([name, d]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>{d.type === 'array' ? `list of ${d.items?.type ?? 'values'}` : d.type}</td>
              <td>{d.required ? 'yes' : 'no'}</td>
              <td class="wrap">{rulesOf(d).join('; ') || '—'}</td>
              <td>{d.default === undefined ? '—' : <code>{JSON.stringify(d.default)}</code>}</td>
              <td class="wrap">{notesOf(name, d, description)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Relations({ description }: { description: EntityDescription }) {
  const list = Object.entries(description.relations);
  if (!list.length) return <p class="muted">No relations.</p>;
  return (
    <div class="table-wrap">
      <table class="striped">
        <thead>
          <tr>
            <th scope="col">Relation</th>
            <th scope="col">Type</th>
            <th scope="col">Entity</th>
            <th scope="col">Key</th>
          </tr>
        </thead>
        <tbody>
          {list.map(([name, r]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>{r.type}</td>
              <td>
                <EntityLink slug={r.entity} />
              </td>
              <td>
                <code>{r.foreignKey}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Access({ description, migration }: { description: EntityDescription; migration?: Migration }) {
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const layout = migration?.layout;
  return (
    <dl class="facts">
      <dt>Your permissions</dt>
      <dd>
        read {yes(description.permissions.read)}, write {yes(description.permissions.write)}, delete {yes(description.permissions.delete)}
      </dd>
      <dt>Operations</dt>
      <dd>{description.methods.join(', ')}</dd>
      {description.rateLimit && (
        <>
          <dt>Your rate limit</dt>
          <dd>
            {description.rateLimit.limit.toLocaleString()} requests per {description.rateLimit.window}
          </dd>
        </>
      )}
      <dt>Delete</dt>
      <dd>{'deletedAt' in description.schema ? 'soft (the record gets deletedAt and leaves every list)' : 'permanent'}</dd>
      {layout && (
        <>
          <dt>Access</dt>
          <dd>
            {layout.access.public
              ? 'public: read without credentials, every record of every tenant'
              : layout.access.shared
                ? 'shared: every user of a tenant sees every record of the tenant'
                : "private: a user sees their own records, an admin every record of the tenant"}
          </dd>
          <dt>Write shards</dt>
          <dd>
            {layout.writeShards ?? 1}
            {migration?.writeShards?.auto ? ' (auto: the controller doubles them while the writes call for it, and halves them after a quiet spell)' : ''}
            {migration?.trigger ? `; last ${migration.trigger.action} ${migration.trigger.from} → ${migration.trigger.to}: ${migration.trigger.reason}` : ''}
          </dd>
          <dt>Searchable fields</dt>
          <dd>{layout.searchable.length ? layout.searchable.join(', ') : 'none'}</dd>
          <dt>Unique fields</dt>
          <dd>{layout.unique.length ? layout.unique.join(', ') : 'none'}</dd>
        </>
      )}
    </dl>
  );
}

function Indexes({ migration }: { migration: Migration }) {
  if (!migration.indexes.length) return <p class="muted">No indexed fields: filters are answered from the entity's listing.</p>;
  return (
    <ul>
      {migration.indexes.map((i) => (
        <li key={i.token}>
          <code>{i.field}</code> {i.ready ? '(ready)' : '(being built: queries do not use it yet)'}
        </li>
      ))}
    </ul>
  );
}

function MigrationState({ migration }: { migration: Migration }) {
  const { report } = migration;
  return (
    <>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <span class={`badge ${migration.state === 'done' ? 'active' : 'inactive'}`}>{migration.state}</span> (run {migration.run})
        </dd>
        <dt>Layout</dt>
        <dd>
          <code>{migration.layout.hash}</code>
          {migration.layout.previous ? (
            <>
              {' '}
              (from <code>{migration.layout.previous}</code>)
            </>
          ) : null}
        </dd>
        <dt>Records processed</dt>
        <dd>
          {migration.processed.toLocaleString()}
          {migration.total !== null ? ` of ${migration.total.toLocaleString()}` : ''}
          {migration.added ? ` (+${migration.added.toLocaleString()} created during the pass)` : ''}
        </dd>
        <dt>Started, ended</dt>
        <dd>
          {when(migration.startedAt)}, {when(migration.endedAt)}
        </dd>
        <dt>What changed</dt>
        <dd>{migration.changes.length ? migration.changes.join('; ') : 'nothing (the layout as first recorded)'}</dd>
        {migration.error && (
          <>
            <dt>Error</dt>
            <dd class="field-error">{migration.error}</dd>
          </>
        )}
      </dl>
      {migration.state === 'running' && migration.total ? <progress aria-label="Migration progress" value={migration.processed} max={migration.total} /> : null}
      <h3>Report</h3>
      {report.count === 0 ? (
        <p class="muted">Nothing to report: no record broke a rule or repeated a unique value.</p>
      ) : (
        <>
          <p>
            {report.count} {report.count === 1 ? 'record' : 'records'} to look at{report.entries.length < report.count ? ` (the first ${report.entries.length})` : ''}:
          </p>
          <div class="table-wrap">
            <table class="striped">
              <thead>
                <tr>
                  <th scope="col">Record</th>
                  <th scope="col">Field</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {report.entries.map((e) => (
                  <tr key={`${e.kind}-${e.recordId}-${e.field}`}>
                    <td>
                      <code>{e.recordId}</code>
                    </td>
                    <td>{e.field}</td>
                    <td>{e.kind === 'duplicate' ? `duplicate (kept by ${e.keptId ?? '?'})` : 'breaks a rule'}</td>
                    <td class="wrap">{e.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}

export function Schema({ slug }: { slug: string }) {
  const [description, setDescription] = useState<EntityDescription>();
  const [error, setError] = useState<Error>();
  const [migration, setMigration] = useState<Migration | null>();
  const [migrationError, setMigrationError] = useState<Error>();
  const [forbidden, setForbidden] = useState(!mayBeOperator());
  const operator = !forbidden;

  useEffect(() => {
    describe(slug).then(setDescription, setError);
    if (forbidden) return;
    unwrap<{ data: Migration[] }>(client.GET('/api/v1/migrations'))
      .then(({ body }) => setMigration(body.data.find((m) => m.entity === slug) ?? null))
      .catch((e: Error) => (e instanceof ApiFailure && e.status === 403 ? setForbidden(true) : setMigrationError(e)));
  }, [slug]);

  // Sections in the order of a definition file; history and aggregate settings, when the registry
  // has them, get a section of their own here (from the description, like the fields).
  return (
    <section class="schema">
      <nav aria-label="breadcrumb" class="crumbs">
        <ul>
          <li>
            <a href={href(slug)}>{slug}</a>
          </li>
          <li>schema</li>
        </ul>
      </nav>
      <h1>Schema of {slug}</h1>
      <p class="muted">
        Read-only: an entity is defined by its file in <code>shared/registry/entities/</code>. How to change it, and what a change does to the records already stored (a start or
        deploy migrates them in the background), is in <code>{CHANGING}</code>, sections “What each kind of change does” and “Running it”.
      </p>
      {error && <ErrorText error={error} />}
      {!description && !error && <Loading label={`Loading the definition of ${slug}`} />}
      {description && (
        <>
          <Section id="fields" title="Fields and rules">
            <Fields description={description} />
          </Section>
          <Section id="relations" title="Relations">
            <Relations description={description} />
          </Section>
          <Section id="access" title="Access and limits">
            <Access description={description} migration={migration ?? undefined} />
          </Section>
          {migrationError && <ErrorText message={`The migration state could not be loaded: ${migrationError.message}`} error={migrationError} />}
          {operator && migration === undefined && !migrationError && <Loading label="Loading the layout and migration" />}
          {migration && (
            <>
              <Section id="indexes" title="Indexes">
                <Indexes migration={migration} />
              </Section>
              <Section id="migration" title="Migration">
                <MigrationState migration={migration} />
              </Section>
            </>
          )}
          {operator && migration === null && <p class="muted">No layout is recorded for {slug} yet: the next start (or deploy) records it.</p>}
          {forbidden && (
            <p class="muted">
              Access mode, indexes, write shards and the migration's state and report are shown to the platform operator (they come from <code>GET /api/v1/migrations</code>).
            </p>
          )}
        </>
      )}
    </section>
  );
}
