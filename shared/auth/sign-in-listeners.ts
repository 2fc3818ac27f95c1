/**
 * Who wants to know that a user signed in: the local runtime forgets the bootstrap admin's
 * generated password once that admin has used it (infra/local/admin-password.ts). Listeners run
 * after the session exists; one that fails never fails the sign-in.
 */
type SignInListener = (user: { id: string; email: string }) => void;

const listeners = new Set<SignInListener>();

export function onSignIn(listener: SignInListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function signedIn(user: { id: string; email: string }): void {
  for (const listener of listeners) {
    try {
      listener(user);
    } catch {
      // A listener's own trouble is its own: the user is signed in.
    }
  }
}
