/**
 * Routing by the URL's fragment (#/tasks?sort=title), so that the server serves one page at
 * /dashboard whatever the view, under any stage or base path, and a view can be bookmarked.
 */
import { signal } from '@preact/signals';

export interface Route {
  /** Path segments after '#/': ['tasks'], ['tasks', 'new'], ['keys']. */
  segments: string[];
  params: URLSearchParams;
  /** The fragment as is, to come back to after signing in. */
  hash: string;
}

function parse(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [path, query = ''] = text.split('?', 2);
  return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query), hash: hash || '#/' };
}

export const route = signal<Route>(parse(location.hash));
window.addEventListener('hashchange', () => (route.value = parse(location.hash)));

export function href(path: string, params?: URLSearchParams): string {
  const qs = params?.toString();
  return `#/${path}${qs ? `?${qs}` : ''}`;
}

export function navigate(path: string, params?: URLSearchParams, options: { replace?: boolean } = {}): void {
  const target = href(path, params);
  if (options.replace) {
    history.replaceState(null, '', target);
    route.value = parse(target);
  } else {
    location.hash = target;
  }
}
