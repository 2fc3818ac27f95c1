/**
 * Sign in with e-mail and password (POST /api/v1/auth/login); afterwards back to the page the user
 * was on. Identity providers the API offers (GET /api/v1/auth/oidc) get a "Sign in with {name}"
 * link each: the browser goes through the provider and comes back signed in (or with `?signin=`
 * saying why not).
 */
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, basePath, client, newSignIn, sessionExpired, unwrap } from '../api.js';
import { route } from '../router.js';
import { setMe, type Me } from '../state.js';

/** Set by signing out of a session begun through an identity provider: its own sign-out, offered here. */
export const providerSignOut = signal<{ name: string; url: string } | undefined>(undefined);

const SIGN_IN_OUTCOMES: Record<string, string> = {
  failed: 'Signing in through your identity provider did not succeed. Try again, or ask an administrator.',
  cancelled: 'Signing in through your identity provider was cancelled.',
};

/** The outcome the API's sign-in callback put into the URL, read once and taken out of the address bar. */
function takeOutcome(): string | undefined {
  const outcome = new URLSearchParams(location.search).get('signin');
  if (outcome === null) return undefined;
  history.replaceState(null, '', location.pathname + location.hash);
  return SIGN_IN_OUTCOMES[outcome] ?? SIGN_IN_OUTCOMES.failed;
}

export function SignIn({ expired }: { expired: boolean }) {
  const [providers, setProviders] = useState<{ id: string; name: string }[]>([]);
  const [outcome] = useState(takeOutcome);
  useEffect(() => {
    unwrap<{ data: { id: string; name: string }[] }>(client.GET('/api/v1/auth/oidc')).then(
      ({ body }) => setProviders(body.data),
      () => undefined,
    );
  }, []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { body } = await unwrap<{ data: { user: Me } }>(client.POST('/api/v1/auth/login', { body: { email, password } }));
      // The page the user was on stays in the URL's fragment: showing it again is enough.
      const back = route.value.hash;
      newSignIn();
      sessionExpired.value = false;
      setMe(body.data.user);
      if (location.hash !== back) location.hash = back;
    } catch (e) {
      setError(e instanceof ApiFailure ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="container signin">
      <article>
        <header>
          <h1>Sign in</h1>
          <p>Entity Record API dashboard</p>
        </header>
        {providerSignOut.value && (
          <p role="status" class="notice info">
            You are signed out here. <a href={providerSignOut.value.url}>Sign out of {providerSignOut.value.name} too</a>
          </p>
        )}
        {outcome && (
          <p role="alert" class="error-box">
            {outcome}
          </p>
        )}
        {expired && (
          <p role="status" class="notice info">
            Your session has ended. Sign in again to go back to where you were.
          </p>
        )}
        <form onSubmit={submit}>
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          {error && (
            <p role="alert" class="error-box">
              {error}
            </p>
          )}
          <button type="submit" aria-busy={busy ? 'true' : undefined} disabled={busy}>
            Sign in
          </button>
        </form>
        {providers.map((p) => (
          <a key={p.id} class="provider" href={`${basePath}/api/v1/auth/oidc/${encodeURIComponent(p.id)}`}>
            Sign in with {p.name}
          </a>
        ))}
      </article>
    </main>
  );
}
