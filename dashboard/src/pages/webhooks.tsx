/**
 * Webhooks of the tenant: register (URL, events, a secret generated here or given), list, delete,
 * each webhook's deliveries with status and response code, a retry of a delivery, a test ping.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, client, unwrap } from '../api.js';
import { eventTypes, flash } from '../state.js';
import { Confirm, ErrorText, Loading, Modal, when } from '../ui.js';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  status: string;
  createdAt: string;
}

interface Delivery {
  id: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  responseCode: number | null;
  responseTimeMs: number | null;
  error: string | null;
  lastAttemptAt: string | null;
  createdAt: string;
}


/** 32 random bytes as hex: a secret the receiver will check signatures with. */
function generatedSecret(): string {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function Webhooks() {
  const [hooks, setHooks] = useState<Webhook[]>();
  const [error, setError] = useState<Error>();
  const [registering, setRegistering] = useState(false);
  const [secret, setSecret] = useState<{ url: string; secret: string }>();
  const [removing, setRemoving] = useState<Webhook>();
  const [open, setOpen] = useState<string>();
  const [reload, setReload] = useState(0);
  const [pinging, setPinging] = useState<string>();

  useEffect(() => {
    unwrap<{ data: Webhook[] }>(client.GET('/api/v1/webhooks'))
      .then(({ body }) => setHooks(body.data))
      .catch(setError);
  }, [reload]);

  async function ping(hook: Webhook) {
    setPinging(hook.id);
    try {
      const { body } = await unwrap<{ data: Delivery }>(client.POST('/api/v1/webhooks/{id}/test', { params: { path: { id: hook.id } } } as never));
      const d = body.data;
      flash(`Test delivery to ${hook.url}: ${d.status}${d.responseCode ? ` (${d.responseCode})` : ''}${d.error ? `: ${d.error}` : ''}.`, d.status === 'succeeded' ? 'success' : 'info');
      setOpen(hook.id);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setPinging(undefined);
    }
  }

  async function remove(hook: Webhook) {
    try {
      await unwrap(client.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } }));
      flash(`Removed the webhook to ${hook.url}.`);
      if (open === hook.id) setOpen(undefined);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setRemoving(undefined);
    }
  }

  return (
    <section class="webhooks">
      <div class="page-head">
        <h1>Webhooks</h1>
        <button type="button" onClick={() => setRegistering(true)}>
          Register webhook
        </button>
      </div>
      <p class="muted">Changes to records are POSTed to each webhook's URL, signed with its secret (header x-webhook-signature: hex HMAC-SHA256 of the body).</p>
      {secret && (
        <article class="new-key" aria-labelledby="secret-title">
          <h2 id="secret-title">Webhook registered</h2>
          <p role="alert" class="warning">Store this secret with your receiver now: the API never shows it again.</p>
          <div class="key-row">
            <code aria-label="Webhook secret">{secret.secret}</code>
            <button type="button" onClick={() => navigator.clipboard.writeText(secret.secret).then(() => flash('Secret copied.'), () => undefined)}>
              Copy
            </button>
          </div>
          <button type="button" class="secondary outline small" onClick={() => setSecret(undefined)}>
            I have stored it, hide the secret
          </button>
        </article>
      )}
      {error && <ErrorText error={error} />}
      {!hooks && !error && <Loading label="Loading the webhooks" />}
      {hooks && hooks.length === 0 && <p class="empty">No webhooks yet. Register one with Register webhook to receive record changes.</p>}
      {hooks && hooks.length > 0 && (
        <div class="table-wrap">
          <table class="striped cards">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Registered</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {hooks.map((h) => (
                <tr key={h.id}>
                  <td data-label="URL" class="cell">
                    {h.url}
                  </td>
                  <td data-label="Events" class="scopes">
                    {h.events.join(', ')}
                  </td>
                  <td data-label="Status">
                    <span class={`badge ${h.status === 'active' ? 'active' : 'inactive'}`}>{h.status}</span>
                  </td>
                  <td data-label="Registered">{when(h.createdAt)}</td>
                  <td data-label="Actions" class="row-actions">
                    <button type="button" class="secondary outline small" aria-label={`Deliveries of ${h.url}`} aria-expanded={open === h.id} onClick={() => setOpen(open === h.id ? undefined : h.id)}>
                      Deliveries
                    </button>
                    <button type="button" class="secondary outline small" aria-label={`Send a test to ${h.url}`} aria-busy={pinging === h.id ? 'true' : undefined} disabled={pinging === h.id} onClick={() => ping(h)}>
                      Send test
                    </button>
                    <button type="button" class="danger outline small" aria-label={`Delete the webhook to ${h.url}`} onClick={() => setRemoving(h)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <Deliveries key={`${open}-${reload}`} hook={hooks?.find((h) => h.id === open)} />}
      {registering && (
        <Register
          onClose={() => setRegistering(false)}
          onDone={(url, s) => {
            setRegistering(false);
            setSecret({ url, secret: s });
            setReload((n) => n + 1);
          }}
        />
      )}
      {removing && (
        <Confirm title="Delete this webhook?" text={`Nothing more is delivered to ${removing.url}.`} action="Delete" onConfirm={() => remove(removing)} onClose={() => setRemoving(undefined)} />
      )}
    </section>
  );
}

function Register({ onClose, onDone }: { onClose: () => void; onDone: (url: string, secret: string) => void }) {
  const [url, setUrl] = useState('https://');
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [secret, setSecret] = useState(generatedSecret());
  const [error, setError] = useState<ApiFailure>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(client.POST('/api/v1/webhooks', { body: { url, events: [...events], secret } }));
      onDone(url, secret);
    } catch (err) {
      setError(err as ApiFailure);
    } finally {
      setBusy(false);
    }
  }
  const fieldError = (name: string) =>
    error?.details[name] ? (
      <small id={`wh-${name}-error`} class="field-error">
        {error.details[name]}
      </small>
    ) : null;

  return (
    <Modal title="Register a webhook" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <label for="wh-url">URL</label>
        <input id="wh-url" type="url" required value={url} aria-invalid={error?.details.url ? 'true' : undefined} aria-describedby={error?.details.url ? 'wh-url-error' : undefined} onInput={(e) => setUrl(e.currentTarget.value)} />
        {fieldError('url')}
        <fieldset>
          <legend>Events</legend>
          <div class="scope-grid">
            {eventTypes.value.map((t) => (
              <label key={t}>
                <input
                  type="checkbox"
                  checked={events.has(t)}
                  onChange={(e) => {
                    const next = new Set(events);
                    if (e.currentTarget.checked) next.add(t);
                    else next.delete(t);
                    setEvents(next);
                  }}
                />
                {t}
              </label>
            ))}
          </div>
          {fieldError('events')}
        </fieldset>
        <label for="wh-secret">Secret</label>
        <div class="key-row">
          <input id="wh-secret" class="mono" required value={secret} aria-describedby="wh-secret-hint" onInput={(e) => setSecret(e.currentTarget.value)} />
          <button type="button" class="secondary outline" onClick={() => setSecret(generatedSecret())}>
            Generate
          </button>
        </div>
        <small id="wh-secret-hint">Generated here, or give your own (8 to 512 characters).</small>
        {fieldError('secret')}
        {error && <ErrorText message={error.message} code={error.code} />}
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>{' '}
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Register
          </button>
        </footer>
      </form>
    </Modal>
  );
}

function Deliveries({ hook }: { hook?: Webhook }) {
  const [items, setItems] = useState<Delivery[]>();
  const [error, setError] = useState<Error>();
  const [reload, setReload] = useState(0);
  useEffect(() => {
    if (!hook) return;
    unwrap<{ data: Delivery[] }>(client.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: hook.id } } } as never))
      .then(({ body }) => setItems(body.data))
      .catch(setError);
  }, [hook?.id, reload]);
  if (!hook) return null;

  async function retry(d: Delivery) {
    try {
      const { body } = await unwrap<{ data: Delivery }>(client.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id: hook!.id, deliveryId: d.id } } } as never));
      flash(`Delivery sent again: ${body.data.status}${body.data.responseCode ? ` (${body.data.responseCode})` : ''}.`, body.data.status === 'succeeded' ? 'success' : 'info');
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    }
  }

  return (
    <section class="audit" aria-labelledby="deliveries-title">
      <div class="page-head">
        <h2 id="deliveries-title">Deliveries to {hook.url}</h2>
        <button type="button" class="secondary outline small" onClick={() => setReload((n) => n + 1)}>
          Refresh
        </button>
      </div>
      {error && <ErrorText error={error} />}
      {!items && !error && <Loading label="Loading the deliveries" />}
      {items && items.length === 0 && <p class="empty">Nothing delivered yet. Send a test, or change a record of a subscribed entity.</p>}
      {items && items.length > 0 && (
        <div class="table-wrap">
          <table class="striped">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Response code</th>
                <th scope="col">Attempts</th>
                <th scope="col">Error</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id}>
                  <td>{when(d.lastAttemptAt ?? d.createdAt)}</td>
                  <td>{d.eventType}</td>
                  <td>
                    <span class={`badge ${d.status === 'succeeded' ? 'active' : 'inactive'}`}>{d.status}</span>
                  </td>
                  <td>{d.responseCode ?? '—'}</td>
                  <td>{d.attempts}</td>
                  <td class="cell">{d.error ?? ''}</td>
                  <td>
                    <button type="button" class="secondary outline small" aria-label={`Retry delivery ${d.id}`} onClick={() => retry(d)}>
                      Retry
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
