/** The shell: sign-in when there is no session, else the navigation and the page of the route. */
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { ApiFailure, client, newSignIn, sessionExpired, unwrap } from './api.js';
import { href, navigate, route } from './router.js';
import { entities, entitiesError, loadEntities, loadMe, me, notice, pageKey, pagePath, setMe } from './state.js';
import { defaultView } from './views.js';
import { providerSignOut, SignIn } from './pages/sign-in.js';
import { Explorer } from './pages/explorer.js';
import { Editor } from './pages/editor.js';
import { Keys } from './pages/keys.js';
import { Webhooks } from './pages/webhooks.js';
import { Files } from './pages/files.js';
import { Settings } from './pages/settings.js';
import { Schema } from './pages/schema.js';
import { BudgetMeter, ErrorText, Loading, RateLimitBanner } from './ui.js';
import { Trash } from './pages/history.js';
import { undoOffer, UndoToast } from './undo.js';

/** Why the session could not be checked (rate limit, network): shown with a Retry, never a spinner left turning. */
const sessionCheck = signal<Error | undefined>(undefined);

function checkSession(): void {
  sessionCheck.value = undefined;
  loadMe().catch((e: Error) => (sessionCheck.value = e));
}

export function App() {
  useEffect(checkSession, []);

  if (sessionExpired.value || me.value === null) {
    return (
      <>
        <RateLimitBanner />
        <SignIn expired={sessionExpired.value} />
      </>
    );
  }
  if (me.value === undefined) {
    const failure = sessionCheck.value;
    return (
      <main class="container signin">
        <RateLimitBanner onOpen={failure instanceof ApiFailure && failure.status === 429 ? checkSession : undefined} />
        {failure ? (
          <ErrorText
            message={
              failure instanceof ApiFailure && failure.status === 429
                ? "Your session could not be checked yet: it has used the requests its rate-limit window allows. The dashboard opens by itself when the window resets."
                : `Your session could not be checked: ${failure.message}`
            }
            error={failure}
            onRetry={checkSession}
          />
        ) : (
          <Loading label="Checking your session" />
        )}
      </main>
    );
  }
  return <Shell />;
}

async function signOut() {
  try {
    const { body } = await unwrap<{ data?: { endSession?: { name: string; url: string } } }>(client.POST('/api/v1/auth/logout'));
    providerSignOut.value = body?.data?.endSession;
  } catch {
    // Already signed out: the session is gone either way.
  }
  newSignIn();
  setMe(null);
  navigate('', undefined, { replace: true });
}

function NavLink({ path, label, current }: { path: string; label: string; current: string }) {
  return (
    <a href={href(path)} aria-current={current === path ? 'page' : undefined}>
      {label}
    </a>
  );
}

function Shell() {
  useEffect(() => {
    loadEntities();
  }, []);
  const segments = route.value.segments;
  const current = segments[0] ?? '';
  const path = pagePath(segments);
  const list = entities.value;

  useEffect(() => {
    // The route as it is now (not as rendered): the user may have gone elsewhere meanwhile.
    if (route.value.segments[0] || !list?.length) return;
    let live = true;
    defaultView(me.value!.id, list).then((target) => live && !route.value.segments[0] && navigate(target.path, target.params, { replace: true }));
    return () => {
      live = false;
    };
  }, [current, list]);

  useEffect(() => {
    // A notice belongs to its page: leaving the page takes it away.
    if (notice.value && notice.value.path !== path) notice.value = undefined;
    if (undoOffer.value && undoOffer.value.path !== path) undoOffer.value = undefined;
  }, [path]);

  useEffect(() => {
    if (!notice.value) return;
    const timer = setTimeout(() => (notice.value = undefined), 6000);
    return () => clearTimeout(timer);
  }, [notice.value]);

  return (
    <>
      <header class="topbar">
        <div class="brand">
          <strong>Entity Record API</strong>
        </div>
        <nav aria-label="Main" class="mainnav">
          <ul>
            {(list ?? []).map((slug) => (
              <li key={slug}>
                <NavLink path={slug} label={slug} current={current} />
              </li>
            ))}
            <li class="sep">
              <NavLink path="keys" label="API keys" current={current} />
            </li>
            <li>
              <NavLink path="webhooks" label="Webhooks" current={current} />
            </li>
            <li>
              <NavLink path="files" label="Files" current={current} />
            </li>
            <li>
              <NavLink path="settings" label="Settings" current={current} />
            </li>
          </ul>
        </nav>
        <div class="account">
          <BudgetMeter />
          <span class="who" title={me.value!.email}>
            {me.value!.email}
            {me.value!.role === 'admin' ? ' · admin' : ''}
          </span>
          <button type="button" class="outline secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
        {/* In the sticky header: seen wherever the user is on the page (a 429 of Next at the bottom of a table). */}
        <RateLimitBanner />
      </header>
      <main class="container-fluid page">
        {notice.value && notice.value.path === path && (
          <p role="status" class={`notice ${notice.value.tone}`}>
            {notice.value.text}
          </p>
        )}
        {entitiesError.value && <ErrorText message={`The list of entities could not be loaded: ${entitiesError.value}`} onRetry={() => ((entitiesError.value = undefined), loadEntities())} />}
        <Page key={`${pageKey.value}`} segments={segments} entityList={list} />
        <UndoToast path={path} />
      </main>
    </>
  );
}

function Page({ segments, entityList }: { segments: string[]; entityList?: string[] }) {
  const [first, second] = segments;
  if (!first) return entityList ? entityList.length ? <Loading label="Opening your last view" /> : <p>No entities are registered.</p> : <Loading label="Loading the entities" />;
  if (first === 'keys') return <Keys />;
  if (first === 'webhooks') return <Webhooks />;
  if (first === 'files') return <Files />;
  if (first === 'settings') return <Settings />;
  if (entityList && !entityList.includes(first)) {
    return (
      <section>
        <h1>Not found</h1>
        <p>There is no page named “{first}”. Pick an entity in the navigation.</p>
      </section>
    );
  }
  if (second === 'schema') return <Schema key={`${first}/schema`} slug={first} />;
  if (second === 'trash') return <Trash key={`${first}/trash`} slug={first} />;
  if (second === 'new') return <Editor key={`${first}/new`} slug={first} />;
  if (second) return <Editor key={`${first}/${second}`} slug={first} id={second} />;
  return <Explorer key={first} slug={first} />;
}
