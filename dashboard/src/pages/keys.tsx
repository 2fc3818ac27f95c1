/**
 * API keys of the signed-in user (session only): list with usage, create with a scope picker
 * built from the registry (entity × read/write/delete, the system resources, bare scopes, * for
 * admins), the full key shown once, deactivate/reactivate, revoke, and each key's audit log.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '@entity-record-api/client';
import { ApiFailure, client, unwrap } from '../api.js';
import { entities, flash, me } from '../state.js';
import { Confirm, ErrorText, Loading, Modal, when } from '../ui.js';

type Key = Schemas['ApiKey'];

type AuditEntry = Schemas['AuditEntry'];

const ACTIONS = ['read', 'write', 'delete'] as const;
/** Resources that take scopes besides the entities (CONTRACT.md "Scopes of the system endpoints"). */
const SYSTEM_RESOURCES = ['uploads', 'webhooks', 'ai'];


export function Keys() {
  const [keys, setKeys] = useState<Key[]>();
  const [error, setError] = useState<Error>();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ key: string; name: string; warning?: string }>();
  const [revoking, setRevoking] = useState<Key>();
  const [audit, setAudit] = useState<string>();
  const [reload, setReload] = useState(0);

  useEffect(() => {
    unwrap<{ data: Key[] }>(client.GET('/api/v1/api-keys'))
      .then(({ body }) => setKeys(body.data))
      .catch(setError);
  }, [reload]);

  async function setStatus(key: Key, status: 'active' | 'inactive') {
    try {
      await unwrap(client.PATCH('/api/v1/api-keys/{id}', { params: { path: { id: key.id } }, body: { status } }));
      flash(status === 'active' ? `Reactivated ${key.name}.` : `Deactivated ${key.name}: it is refused until reactivated.`);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    }
  }

  async function revoke(key: Key) {
    try {
      await unwrap(client.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.id } } }));
      flash(`Revoked ${key.name}: it no longer authenticates.`);
      setRevoking(undefined);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
      setRevoking(undefined);
    }
  }

  return (
    <section class="keys">
      <div class="page-head">
        <h1>API keys</h1>
        <button type="button" onClick={() => setCreating(true)}>
          Create key
        </button>
      </div>
      <p class="muted">Keys authenticate programs (Authorization: Bearer). They are yours: each acts as you, within its scopes.</p>
      {created && <NewKey created={created} onDone={() => setCreated(undefined)} />}
      {error && <ErrorText error={error} />}
      {!keys && !error && <Loading label="Loading your keys" />}
      {keys && keys.length === 0 && <p class="empty">You have no API keys yet. Create one with Create key; it is shown once.</p>}
      {keys && keys.length > 0 && (
        <div class="table-wrap">
          <table class="striped cards">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Requests (24 h / total)</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td data-label="Name">{k.name}</td>
                  <td data-label="Prefix">
                    <code>{k.keyPrefix}…</code>
                  </td>
                  <td data-label="Scopes" class="scopes">
                    {k.scopes.join(', ')}
                  </td>
                  <td data-label="Status">
                    <span class={`badge ${k.status}`}>{k.status}</span>
                  </td>
                  <td data-label="Expires">{when(k.expiresAt)}</td>
                  <td data-label="Last used">{when(k.lastUsedAt)}</td>
                  <td data-label="Requests (24 h / total)">
                    {k.requestsLast24h} / {k.totalRequests}
                  </td>
                  <td data-label="Actions" class="row-actions">
                    {k.status === 'active' && (
                      <button type="button" class="secondary outline small" aria-label={`Deactivate ${k.name}`} onClick={() => setStatus(k, 'inactive')}>
                        Deactivate
                      </button>
                    )}
                    {k.status === 'inactive' && (
                      <button type="button" class="secondary outline small" aria-label={`Reactivate ${k.name}`} onClick={() => setStatus(k, 'active')}>
                        Reactivate
                      </button>
                    )}
                    <button type="button" class="secondary outline small" aria-label={`Audit log of ${k.name}`} aria-expanded={audit === k.id} onClick={() => setAudit(audit === k.id ? undefined : k.id)}>
                      Audit log
                    </button>
                    <button type="button" class="danger outline small" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {audit && <Audit id={audit} name={keys?.find((k) => k.id === audit)?.name ?? audit} />}
      {creating && (
        <CreateKey
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setCreated(c);
            setReload((n) => n + 1);
          }}
        />
      )}
      {revoking && (
        <Confirm
          title={`Revoke ${revoking.name}?`}
          text="The key stops working at once, for every program that uses it. This cannot be undone."
          action="Revoke"
          onConfirm={() => revoke(revoking)}
          onClose={() => setRevoking(undefined)}
        />
      )}
    </section>
  );
}

function NewKey({ created, onDone }: { created: { key: string; name: string; warning?: string }; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      // Clipboard refused (an insecure origin, a denied permission): select the key for a manual copy.
      const range = document.createRange();
      range.selectNodeContents(document.getElementById('new-key')!);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
    }
  }
  return (
    <article class="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Key “{created.name}” created</h2>
      <p role="alert" class="warning">
        {created.warning ?? 'Copy this key now: it is shown only once and cannot be recovered.'}
      </p>
      <div class="key-row">
        <code id="new-key" aria-label="New key" role="textbox" aria-readonly="true" tabIndex={0}>
          {created.key}
        </code>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" class="secondary outline small" onClick={onDone}>
        I have stored it, hide the key
      </button>
    </article>
  );
}

function CreateKey({ onClose, onCreated }: { onClose: () => void; onCreated: (c: { key: string; name: string; warning?: string }) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set());
  const [expiresAt, setExpiresAt] = useState('');
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);
  const admin = me.value?.role === 'admin';
  const resources = [...(entities.value ?? []), ...SYSTEM_RESOURCES];

  const toggle = (scope: string, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = { name, scopes: [...scopes], ...(expiresAt ? { expiresAt: new Date(expiresAt).toISOString() } : {}) };
      const { body: answer } = await unwrap<{ data: { key: string; name: string }; warning?: string }>(client.POST('/api/v1/api-keys', { body: body as never }));
      onCreated({ key: answer.data.key, name: answer.data.name, warning: answer.warning });
    } catch (err) {
      setError(err as ApiFailure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title="Create an API key" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <label for="key-name">Name</label>
        <input id="key-name" required value={name} aria-invalid={error?.details.name ? 'true' : undefined} aria-describedby={error?.details.name ? 'key-name-error' : undefined} onInput={(e) => setName(e.currentTarget.value)} />
        {error?.details.name && (
          <small id="key-name-error" class="field-error">
            {error.details.name}
          </small>
        )}
        <fieldset class="scope-picker">
          <legend>Scopes</legend>
          <div class="scope-grid" role="group" aria-label="Scopes for every resource">
            {ACTIONS.map((a) => (
              <label key={a}>
                <input type="checkbox" checked={scopes.has(a)} onChange={(e) => toggle(a, e.currentTarget.checked)} />
                {a} (everything)
              </label>
            ))}
            {admin && (
              <label>
                <input type="checkbox" checked={scopes.has('*')} onChange={(e) => toggle('*', e.currentTarget.checked)} />* (all, admins only)
              </label>
            )}
          </div>
          <table class="scope-table">
            <thead>
              <tr>
                <th scope="col">Resource</th>
                {ACTIONS.map((a) => (
                  <th key={a} scope="col">
                    {a}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {resources.map((r) => (
                <tr key={r}>
                  <th scope="row">{r}</th>
                  {ACTIONS.map((a) => (
                    <td key={a}>
                      <input type="checkbox" aria-label={`${r}:${a}`} checked={scopes.has(`${r}:${a}`)} onChange={(e) => toggle(`${r}:${a}`, e.currentTarget.checked)} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {error?.details.scopes && <small class="field-error">{error.details.scopes}</small>}
        </fieldset>
        <label for="key-expires">Expires (optional)</label>
        <input id="key-expires" type="datetime-local" value={expiresAt} onInput={(e) => setExpiresAt(e.currentTarget.value)} />
        {error && <ErrorText message={error.message} code={error.code} />}
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>{' '}
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Create
          </button>
        </footer>
      </form>
    </Modal>
  );
}

function Audit({ id, name }: { id: string; name: string }) {
  const [entries, setEntries] = useState<AuditEntry[]>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    setEntries(undefined);
    unwrap<{ data: AuditEntry[] }>(client.GET('/api/v1/api-keys/{id}/audit', { params: { path: { id } } }))
      .then(({ body }) => setEntries(body.data))
      .catch(setError);
  }, [id]);
  return (
    <section aria-labelledby="audit-title" class="audit">
      <h2 id="audit-title">Audit log of {name}</h2>
      {error && <ErrorText error={error} />}
      {!entries && !error && <Loading label="Loading the audit log" />}
      {entries && entries.length === 0 && <p class="empty">Nothing recorded yet.</p>}
      {entries && entries.length > 0 && (
        <div class="table-wrap">
          <table class="striped">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">IP address</th>
                <th scope="col">User agent</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.timestamp)}</td>
                  <td>{e.action}</td>
                  <td>{e.ipAddress}</td>
                  <td class="cell">{e.userAgent}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
