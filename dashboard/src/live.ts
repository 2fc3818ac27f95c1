/**
 * The entity's event stream (GET /api/v1/stream/{slug}, text/event-stream): created records are
 * shown on top, changed and deleted ones are marked, and the total follows them. The browser's
 * EventSource reconnects by itself with Last-Event-ID, so nothing is missed; one open stream costs
 * one request however long it stays open (the server ends it after 14 minutes, and the browser
 * reconnects): the explorer never polls.
 */
import { useEffect, useState } from 'preact/hooks';
import { apiOrigin, type ApiRecord } from './api.js';

import type { Mark } from './query.js';

export type { Mark };

export interface Live {
  connected: boolean;
  added: ApiRecord[];
  marks: Map<string, Mark>;
  latest: Map<string, ApiRecord>;
  announcement: string;
  /** A new page of results: marks of what it shows are kept, the rows added live go. */
  reset: () => void;
  /** A record this page changed itself (an inline edit): shown as it is now. */
  put: (record: ApiRecord) => void;
}

/** The record kept for a row: the newest version seen (an event may arrive after this page's own save). */
function newer(latest: Map<string, ApiRecord>, record: ApiRecord): Map<string, ApiRecord> {
  const kept = latest.get(record.id);
  if (kept && String(kept.updatedAt ?? '') > String(record.updatedAt ?? '')) return latest;
  return new Map(latest).set(record.id, record);
}

export function useLive(slug: string, enabled: boolean): Live {
  const [connected, setConnected] = useState(false);
  const [added, setAdded] = useState<ApiRecord[]>([]);
  const [marks, setMarks] = useState<Map<string, Mark>>(new Map());
  const [latest, setLatest] = useState<Map<string, ApiRecord>>(new Map());
  const [announcement, setAnnouncement] = useState('');

  useEffect(() => {
    if (!enabled) return;
    const source = new EventSource(`${apiOrigin}/api/v1/stream/${encodeURIComponent(slug)}`, { withCredentials: true });
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(source.readyState === EventSource.OPEN);
    source.onmessage = (message) => {
      let payload: { type?: string; record?: ApiRecord };
      try {
        payload = JSON.parse(message.data as string);
      } catch {
        return;
      }
      const change = payload.type?.slice(payload.type.lastIndexOf('.') + 1) as Mark | undefined;
      const record = payload.record;
      if (!record?.id || !change || !['created', 'updated', 'deleted'].includes(change)) return;
      setMarks((m) => new Map(m).set(record.id, change === 'updated' && m.get(record.id) === 'created' ? 'created' : change));
      if (change === 'created') setAdded((a) => [record, ...a.filter((r) => r.id !== record.id)]);
      if (change !== 'deleted') setLatest((l) => newer(l, record));
      setAnnouncement(`${record.id} ${change}`);
    };
    return () => source.close();
  }, [slug, enabled]);

  return {
    connected,
    added,
    marks,
    latest,
    announcement,
    reset: () => setAdded([]),
    put: (record) => setLatest((l) => newer(l, record)),
  };
}
