/** Sign in with e-mail and password (POST /api/v1/auth/login); afterwards back to the page the user was on. */
import { useState } from 'preact/hooks';
import { ApiFailure, client, newSignIn, sessionExpired, unwrap } from '../api.js';
import { route } from '../router.js';
import { setMe, type Me } from '../state.js';

export function SignIn({ expired }: { expired: boolean }) {
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
      </article>
    </main>
  );
}
