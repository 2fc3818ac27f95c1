/**
 * A module loaded on its first use instead of at module load. In a Lambda bundle, a module reached
 * only through `import()` is in a chunk of its own (infra/aws/functions.ts), read and evaluated
 * when that `import()` runs, so the
 * AWS SDK and the code that calls DynamoDB cost nothing at cold start until a request needs them
 * (a preflight or a refused request never does). A failed load is retried by the next caller.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return function loadOnce(): Promise<T> {
    if (!loading) {
      loading = load();
      loading.catch(() => (loading = undefined));
    }
    return loading;
  };
}
