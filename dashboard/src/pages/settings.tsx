/**
 * Settings: the caller's preferences (a metadata merge source), and for admins the tenant's
 * settings (another merge source), the users of the tenant (add, change role) and, for the
 * platform operator, new tenants.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, client, unwrap } from '../api.js';
import { parseMetadata } from '../form.js';
import { flash, me } from '../state.js';
import { ErrorText, Loading } from '../ui.js';

interface User {
  id: string;
  email: string;
  name?: string;
  role: 'admin' | 'user';
  createdAt?: string;
  preferences?: Record<string, unknown>;
}

const pretty = (value: unknown) => (value && typeof value === 'object' && Object.keys(value).length ? JSON.stringify(value, null, 2) : '');

/** A shallow-merged object's PATCH: the new keys, and null for each key the user removed. */
export function mergePatch(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  return { ...Object.fromEntries(Object.keys(before).filter((k) => !(k in after)).map((k) => [k, null])), ...after };
}

function JsonEditor({ id, label, hint, initial, onSave }: { id: string; label: string; hint: string; initial: Record<string, unknown>; onSave: (value: Record<string, unknown>) => Promise<void> }) {
  const [text, setText] = useState(pretty(initial));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    const parsed = parseMetadata(text);
    if (parsed.error) return setError(`${label} ${parsed.error}`);
    setBusy(true);
    setError(undefined);
    try {
      await onSave(mergePatch(initial, parsed.value ?? {}));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={save}>
      <label for={id}>{label}</label>
      <textarea id={id} class="mono" rows={5} value={text} placeholder="{}" aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : `${id}-hint`} onInput={(e) => setText(e.currentTarget.value)} />
      {error ? (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      ) : (
        <small id={`${id}-hint`}>{hint}</small>
      )}
      <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
        Save {label.toLowerCase()}
      </button>
    </form>
  );
}

export function Settings() {
  const admin = me.value?.role === 'admin';
  return (
    <section class="settings">
      <h1>Settings</h1>
      <Preferences />
      {admin && <Tenant />}
      {admin && <Users />}
      {admin && me.value?.tenantId === 'ten_default' && <NewTenant />}
    </section>
  );
}

function Preferences() {
  const [user, setUser] = useState<User>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    unwrap<{ data: User }>(client.GET('/api/v1/users/me'))
      .then(({ body }) => setUser(body.data))
      .catch(setError);
  }, []);
  return (
    <article aria-labelledby="prefs-title">
      <h2 id="prefs-title">Your preferences</h2>
      {error && <ErrorText error={error} />}
      {!user && !error && <Loading label="Loading your preferences" />}
      {user && (
        <JsonEditor
          id="preferences"
          label="Preferences"
          hint="A JSON object. Records read with mergeMetadata=true merge it over the tenant's settings and under the record's own metadata."
          initial={user.preferences ?? {}}
          onSave={async (preferences) => {
            const { body } = await unwrap<{ data: User }>(client.PATCH('/api/v1/users/me', { body: { preferences } as never }));
            setUser(body.data);
            flash('Saved your preferences.');
          }}
        />
      )}
    </article>
  );
}

function Tenant() {
  const [tenant, setTenant] = useState<{ id: string; name: string; settings: Record<string, unknown> }>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    unwrap<{ data: { id: string; name: string; settings: Record<string, unknown> } }>(client.GET('/api/v1/tenants/me'))
      .then(({ body }) => setTenant(body.data))
      .catch(setError);
  }, []);
  return (
    <article aria-labelledby="tenant-title">
      <h2 id="tenant-title">Tenant {tenant ? `“${tenant.name}”` : ''}</h2>
      {error && <ErrorText error={error} />}
      {!tenant && !error && <Loading label="Loading the tenant" />}
      {tenant && (
        <JsonEditor
          key={tenant.id}
          id="tenant-settings"
          label="Settings"
          hint="A JSON object every user of the tenant inherits (a metadata merge source, under each user's preferences)."
          initial={tenant.settings ?? {}}
          onSave={async (settings) => {
            const { body } = await unwrap<{ data: { id: string; name: string; settings: Record<string, unknown> } }>(client.PATCH('/api/v1/tenants/me', { body: { settings } as never }));
            setTenant(body.data);
            flash('Saved the tenant settings.');
          }}
        />
      )}
    </article>
  );
}

function Users() {
  const [users, setUsers] = useState<User[]>();
  const [error, setError] = useState<Error>();
  const [reload, setReload] = useState(0);
  const [form, setForm] = useState({ email: '', name: '', password: '', role: 'user' });
  const [formError, setFormError] = useState<ApiFailure>();
  useEffect(() => {
    unwrap<{ data: User[] }>(client.GET('/api/v1/users'))
      .then(({ body }) => setUsers(body.data))
      .catch(setError);
  }, [reload]);

  async function changeRole(user: User, role: string) {
    try {
      await unwrap(client.PATCH('/api/v1/users/{id}', { params: { path: { id: user.id } }, body: { role } as never }));
      flash(`${user.email} is now ${role === 'admin' ? 'an admin' : 'a user'}.`);
    } catch (e) {
      setError(e as Error);
    }
    setReload((n) => n + 1);
  }

  async function add(e: Event) {
    e.preventDefault();
    setFormError(undefined);
    try {
      await unwrap(client.POST('/api/v1/users', { body: form as never }));
      flash(`Added ${form.email}.`);
      setForm({ email: '', name: '', password: '', role: 'user' });
      setReload((n) => n + 1);
    } catch (err) {
      setFormError(err as ApiFailure);
    }
  }
  const detail = (name: string) => formError?.details[name];
  const input = (name: 'email' | 'name' | 'password', label: string, type: 'text' | 'email' | 'password' = 'text') => (
    <div>
      <label for={`user-${name}`}>{label}</label>
      <input
        id={`user-${name}`}
        type={type as 'text'}
        required
        value={form[name]}
        autocomplete={name === 'password' ? 'new-password' : 'off'}
        aria-invalid={detail(name) ? 'true' : undefined}
        aria-describedby={detail(name) ? `user-${name}-error` : undefined}
        onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
      />
      {detail(name) && (
        <small id={`user-${name}-error`} class="field-error">
          {detail(name)}
        </small>
      )}
    </div>
  );

  return (
    <article aria-labelledby="users-title">
      <h2 id="users-title">Users of the tenant</h2>
      {error && <ErrorText error={error} />}
      {!users && !error && <Loading label="Loading the users" />}
      {users && (
        <div class="table-wrap">
          <table class="striped">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id}>
                  <td>{u.email}</td>
                  <td>{u.name ?? ''}</td>
                  <td>
                    <select aria-label={`Role of ${u.email}`} value={u.role} disabled={u.id === me.value?.id} onChange={(e) => changeRole(u, e.currentTarget.value)}>
                      <option value="user">user</option>
                      <option value="admin">admin</option>
                    </select>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form onSubmit={add} noValidate class="add-user">
        <h3>Add a user</h3>
        <div class="grid">
          {input('email', 'Email of the new user', 'email')}
          {input('name', 'Name of the new user')}
          {input('password', 'Initial password', 'password')}
          <div>
            <label for="user-role">Role</label>
            <select id="user-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value })}>
              <option value="user">user</option>
              <option value="admin">admin</option>
            </select>
          </div>
        </div>
        {formError && <ErrorText message={formError.message} code={formError.code} />}
        <button type="submit">Add user</button>
      </form>
    </article>
  );
}

function NewTenant() {
  const [form, setForm] = useState({ name: '', email: '', adminName: '', password: '' });
  const [error, setError] = useState<ApiFailure>();
  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const { body } = await unwrap<{ data: { id: string; name: string } }>(
        client.POST('/api/v1/tenants', { body: { name: form.name, admin: { email: form.email, name: form.adminName, password: form.password } } as never }),
      );
      flash(`Created tenant ${body.data.name} (${body.data.id}) with its first admin ${form.email}.`);
      setForm({ name: '', email: '', adminName: '', password: '' });
    } catch (err) {
      setError(err as ApiFailure);
    }
  }
  const field = (key: keyof typeof form, label: string, type: 'text' | 'email' | 'password' = 'text') => (
    <div>
      <label for={`tenant-${key}`}>{label}</label>
      <input id={`tenant-${key}`} type={type as 'text'} required value={form[key]} autocomplete={type === 'password' ? 'new-password' : 'off'} onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })} />
    </div>
  );
  return (
    <article aria-labelledby="new-tenant-title">
      <h2 id="new-tenant-title">Create a tenant</h2>
      <p class="muted">As the platform operator you create tenants, each with its first admin.</p>
      <form onSubmit={create} noValidate>
        <div class="grid">
          {field('name', 'Tenant name')}
          {field('email', 'Admin email', 'email')}
          {field('adminName', 'Admin name')}
          {field('password', 'Admin password', 'password')}
        </div>
        {error && <ErrorText message={`${error.message}${Object.keys(error.details).length ? `: ${Object.entries(error.details).map(([k, v]) => `${k} ${v}`).join('; ')}` : ''}`} code={error.code} />}
        <button type="submit">Create tenant</button>
      </form>
    </article>
  );
}
