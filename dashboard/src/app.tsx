/** The shell: sign-in when there is no session, else the navigation and the page of the route. */
import { useEffect } from 'preact/hooks';
import { client, lastCall, newSignIn, sessionExpired, unwrap } from './api.js';
import { href, navigate, route } from './router.js';
import { entities, entitiesError, loadEntities, loadMe, me, notice, setMe } from './state.js';
import { providerSignOut, SignIn } from './pages/sign-in.js';
import { Explorer } from './pages/explorer.js';
import { Editor } from './pages/editor.js';
import { Keys } from './pages/keys.js';
import { Webhooks } from './pages/webhooks.js';
import { Files } from './pages/files.js';
import { Settings } from './pages/settings.js';
import { ErrorText, Loading } from './ui.js';

export function App() {
  useEffect(() => {
    loadMe().catch(() => undefined);
  }, []);

  if (sessionExpired.value || me.value === null) return <SignIn expired={sessionExpired.value} />;
  if (me.value === undefined) return <Loading label="Checking your session" />;
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

function Shell() {
  useEffect(() => {
    loadEntities();
  }, []);
  const segments = route.value.segments;
  const current = segments[0] ?? '';
  const list = entities.value;

  useEffect(() => {
    // The route as it is now (not as rendered): the user may have gone elsewhere meanwhile.
    if (!route.value.segments[0] && list?.length) navigate(list[0], undefined, { replace: true });
  }, [current, list]);

  useEffect(() => {
    if (!notice.value) return;
    const timer = setTimeout(() => (notice.value = undefined), 5000);
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
                <a href={href(slug)} aria-current={current === slug ? 'page' : undefined}>
                  {slug}
                </a>
              </li>
            ))}
            <li class="sep">
              <a href={href('keys')} aria-current={current === 'keys' ? 'page' : undefined}>
                API keys
              </a>
            </li>
            <li>
              <a href={href('webhooks')} aria-current={current === 'webhooks' ? 'page' : undefined}>
                Webhooks
              </a>
            </li>
            <li>
              <a href={href('files')} aria-current={current === 'files' ? 'page' : undefined}>
                Files
              </a>
            </li>
            <li>
              <a href={href('settings')} aria-current={current === 'settings' ? 'page' : undefined}>
                Settings
              </a>
            </li>
          </ul>
        </nav>
        <div class="account">
          {lastCall.value?.rateLimitRemaining && (
            <span class="quota" title={`Requests left of ${lastCall.value.rateLimitLimit} in this hour's window for your session (X-RateLimit-Remaining)`}>
              {lastCall.value.rateLimitRemaining} left
            </span>
          )}
          <span class="who" title={me.value!.email}>
            {me.value!.email}
            {me.value!.role === 'admin' ? ' · admin' : ''}
          </span>
          <button type="button" class="outline secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main class="container-fluid page">
        {notice.value && (
          <p role="status" class={`notice ${notice.value.tone}`}>
            {notice.value.text}
          </p>
        )}
        {entitiesError.value && <ErrorText message={`The list of entities could not be loaded: ${entitiesError.value}`} />}
        <Page segments={segments} entityList={list} />
      </main>
    </>
  );
}

function Page({ segments, entityList }: { segments: string[]; entityList?: string[] }) {
  const [first, second] = segments;
  if (!first) return entityList ? <p>No entities are registered.</p> : <Loading label="Loading the entities" />;
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
  if (second === 'new') return <Editor key={`${first}/new`} slug={first} />;
  if (second) return <Editor key={`${first}/${second}`} slug={first} id={second} />;
  return <Explorer key={first} slug={first} />;
}
