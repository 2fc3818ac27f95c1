/**
 * What the dashboard keeps in the browser. The browser session's store (sessionStorage) holds what
 * saves requests while the tab lives: the user, the entities, their descriptions, the rate-limit
 * budget last seen. The browser's store (localStorage) holds, per user, what outlives the tab:
 * saved views and the last view visited. Saved views are not kept in the user's `preferences`,
 * because preferences are a metadata merge source: every record read with mergeMetadata=true
 * would carry them.
 */
const PREFIX = 'dashboard.v1.';

function read<T>(storage: Storage | undefined, key: string): T | undefined {
  try {
    const text = storage?.getItem(PREFIX + key);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

function write(storage: Storage | undefined, key: string, value: unknown): void {
  try {
    if (value === undefined) storage?.removeItem(PREFIX + key);
    else storage?.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Storage full or refused: the value is fetched (or chosen) again next time.
  }
}

const session = () => (typeof sessionStorage === 'undefined' ? undefined : sessionStorage);
const local = () => (typeof localStorage === 'undefined' ? undefined : localStorage);

export const sessionStore = {
  get: <T>(key: string) => read<T>(session(), key),
  set: (key: string, value: unknown) => write(session(), key, value),
  /** Everything of the browser session's store (sign-out). */
  clear(): void {
    const storage = session();
    if (!storage) return;
    for (const key of Object.keys(storage)) if (key.startsWith(PREFIX)) storage.removeItem(key);
  },
};

export const userStore = {
  get: <T>(userId: string, key: string) => read<T>(local(), `${userId}.${key}`),
  set: (userId: string, key: string, value: unknown) => write(local(), `${userId}.${key}`, value),
};
