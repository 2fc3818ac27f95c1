/** A small text/event-stream reader over fetch, for the stream's integration tests. */

export interface SseMessage {
  id?: string;
  event?: string;
  /** The parsed JSON of the data lines. */
  data?: any;
  retry?: number;
  /** Comment lines (": ping"), without the colon. */
  comments: string[];
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** Every message received so far (comment-only blocks included). */
  messages: SseMessage[];
  /** The body as text when the response was not a stream (errors). */
  errorBody?: any;
  /** Resolves with the first message (from the start) matching, or rejects after `timeoutMs`. */
  waitFor(match: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

function parseBlock(block: string): SseMessage {
  const message: SseMessage = { comments: [] };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) message.comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) message.id = line.slice(4);
    else if (line.startsWith('event: ')) message.event = line.slice(7);
    else if (line.startsWith('retry: ')) message.retry = Number(line.slice(7));
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length) message.data = JSON.parse(data.join('\n'));
  return message;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const listeners = new Set<() => void>();
  const connection: SseConnection = {
    status: response.status,
    headers: response.headers,
    messages,
    ended: Promise.resolve(),
    waitFor(match, timeoutMs = 8000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = messages.find(match);
          if (found) {
            listeners.delete(listener);
            clearTimeout(timer);
            resolve(found);
          }
          return Boolean(found);
        };
        const listener = (): void => void check();
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`no matching message in ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        if (!check()) listeners.add(listener);
      });
    },
    close: () => abort.abort(),
  };
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await response.text();
    connection.errorBody = text ? JSON.parse(text) : undefined;
    return connection;
  }
  connection.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          messages.push(parseBlock(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
          for (const listener of [...listeners]) listener();
        }
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    }
  })();
  return connection;
}

/** Change messages only (not connected, reset or heartbeats). */
export function changes(connection: SseConnection): SseMessage[] {
  return connection.messages.filter((m) => typeof m.data?.type === 'string' && /\.(created|updated|deleted)$/.test(m.data.type));
}
