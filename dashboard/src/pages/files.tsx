/**
 * Files of the signed-in user: upload by drag and drop (or a file picker) with a progress bar,
 * list, open, delete. A file a function can take in one request goes as multipart to
 * POST /api/v1/upload; a larger one (up to the API's 10 MiB) through the presigned flow: the API
 * signs a form (POST /api/v1/upload/presign), the browser POSTs the file straight to the object
 * store (s3rver locally, S3 on AWS: the page's CSP allows that origin in connect-src, the bucket's
 * CORS allows the page's origin), then the API checks and records it (POST /api/v1/upload/complete).
 * Both file transfers use XMLHttpRequest, whose upload progress fetch (and so the typed client)
 * cannot report.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, apiOrigin, client, noteAnswer, unwrap, type Pagination } from '../api.js';
import { flash } from '../state.js';
import { Confirm, ErrorText, Loading } from '../ui.js';

interface StoredFile {
  id: string;
  filename: string;
  size: number;
  type: string;
  url: string;
  createdAt: string;
}

/** What one multipart request may carry (a Lambda request), less room for the multipart framing. */
export const MULTIPART_FILE_LIMIT = 4_669_440 - 4096;
/** The API's limit for one file (SPEC.md "Limits"); the server judges, this only saves a refused transfer. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const TYPES = ['image/jpeg', 'image/png', 'application/pdf'];

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  // A limit reads "10 MiB"; a file's size keeps its decimal ("6.0 MiB").
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The media type to presign: the browser's, or else read from the first bytes (a file without
 * an extension). The server checks the stored bytes against it either way.
 */
async function mediaType(file: File): Promise<string> {
  if (TYPES.includes(file.type)) return file.type;
  const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (String.fromCharCode(...head.subarray(0, 5)) === '%PDF-') return 'application/pdf';
  return file.type || 'application/octet-stream';
}

/** One POST of a form with upload progress; resolves with the XHR once answered, rejects when the network fails. */
function post(url: string, form: FormData, onProgress: (fraction: number) => void, options: { json?: boolean } = {}): Promise<XMLHttpRequest> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    if (options.json) xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      // The API's answers tell the rate-limit window (the object store, another origin, has none to tell).
      if (new URL(url, location.href).origin === location.origin) noteAnswer(xhr.status, (name) => xhr.getResponseHeader(name));
      resolve(xhr);
    };
    xhr.onerror = () => reject(new ApiFailure(0, 'NETWORK_ERROR', `The upload could not reach ${new URL(url, location.href).origin}`));
    xhr.send(form);
  });
}

/** POST /api/v1/upload (multipart) with progress; resolves with the stored file or rejects with the API's error. */
async function uploadMultipart(file: File, onProgress: (fraction: number) => void): Promise<StoredFile> {
  const form = new FormData();
  form.append('file', file, file.name);
  const xhr = await post(`${apiOrigin}/api/v1/upload`, form, onProgress, { json: true });
  const body = xhr.response as { data?: StoredFile; error?: string; code?: string } | null;
  if (xhr.status >= 200 && xhr.status < 300 && body?.data) return body.data;
  throw new ApiFailure(xhr.status, body?.code ?? `HTTP_${xhr.status}`, body?.error ?? `Upload failed (${xhr.status})`);
}

/** The presigned flow: presign, the file POSTed to the object store with progress, complete. Two API requests. */
async function uploadPresigned(file: File, onProgress: (fraction: number) => void): Promise<StoredFile> {
  const type = await mediaType(file);
  const { body } = await unwrap<{ data: { url: string; fields: Record<string, string>; key: string } }>(
    client.POST('/api/v1/upload/presign', { body: { filename: file.name, type, size: file.size } } as never),
  );
  const { url, fields, key } = body.data;
  // The policy's fields first, the file last (S3 ignores fields after it).
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', file, file.name);
  const xhr = await post(url, form, onProgress).catch((e: ApiFailure) => {
    // The browser hides why; a store whose CORS does not name this page's origin looks the same.
    throw new ApiFailure(e.status, e.code, `${e.message}: the network failed, or the object store's CORS rules do not allow ${location.origin}`);
  });
  if (xhr.status < 200 || xhr.status >= 300) {
    // S3's own XML error; its message says what the policy refused.
    const message = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText ?? '')?.[1];
    throw new ApiFailure(xhr.status, 'STORAGE_REFUSED', `The object store refused the file (${xhr.status}${message ? `: ${message}` : ''})`);
  }
  const done = await unwrap<{ data: StoredFile }>(client.POST('/api/v1/upload/complete', { body: { key } } as never));
  return done.body.data;
}

export function Files() {
  const [files, setFiles] = useState<StoredFile[]>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<Error>();
  const [progress, setProgress] = useState<{ name: string; fraction: number }>();
  const [dragging, setDragging] = useState(false);
  const [removing, setRemoving] = useState<StoredFile>();
  const [reload, setReload] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    unwrap<{ data: StoredFile[]; pagination: Pagination }>(client.GET('/api/v1/uploads', { params: { query: { limit: 100 } } } as never))
      .then(({ body }) => {
        setFiles(body.data);
        setTotal(body.pagination.total);
      })
      .catch(setError);
  }, [reload]);

  async function send(file: File) {
    setError(undefined);
    if (file.size > MAX_FILE_BYTES) {
      setError(new Error(`${file.name} is ${size(file.size)}: files can be at most ${size(MAX_FILE_BYTES)}.`));
      return;
    }
    const upload = file.size > MULTIPART_FILE_LIMIT ? uploadPresigned : uploadMultipart;
    setProgress({ name: file.name, fraction: 0 });
    try {
      const stored = await upload(file, (fraction) => setProgress({ name: file.name, fraction }));
      flash(`Uploaded ${stored.filename} (${size(stored.size)}).`);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setProgress(undefined);
      if (input.current) input.current.value = '';
    }
  }

  async function remove(file: StoredFile) {
    try {
      await unwrap(client.DELETE('/api/v1/uploads/{id}', { params: { path: { id: file.id } } } as never));
      flash(`Deleted ${file.filename}.`);
      setReload((n) => n + 1);
    } catch (e) {
      setError(e as Error);
    } finally {
      setRemoving(undefined);
    }
  }

  return (
    <section class="files">
      <div class="page-head">
        <h1>Files</h1>
      </div>
      <div
        class={`dropzone ${dragging ? 'dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          const file = e.dataTransfer?.files[0];
          if (file) send(file);
        }}
      >
        <label for="file-input">Drop a file here, or choose one</label>
        <input id="file-input" ref={input} type="file" accept={TYPES.join(',')} aria-describedby="file-hint" disabled={Boolean(progress)} onChange={(e) => e.currentTarget.files?.[0] && send(e.currentTarget.files[0])} />
        <small id="file-hint">JPEG, PNG or PDF (judged by the file's bytes), up to {size(MAX_FILE_BYTES)}.</small>
        {progress && (
          <div class="progress">
            <label for="upload-progress">
              Uploading {progress.name}: {Math.round(progress.fraction * 100)}%
            </label>
            <progress id="upload-progress" value={progress.fraction} max={1} />
          </div>
        )}
      </div>
      {error && <ErrorText error={error} />}
      {!files && !error && <Loading label="Loading your files" />}
      {files && files.length === 0 && <p class="empty">No files yet. Drop one above to upload it.</p>}
      {files && files.length > 0 && (
        <>
          <p class="list-meta">{total === 1 ? '1 file' : `${total} files`}</p>
          <div class="table-wrap">
            <table class="striped">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" class="wide-only">Type</th>
                  <th scope="col">Size</th>
                  <th scope="col" class="wide-only">Uploaded</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {files.map((f) => (
                  <tr key={f.id}>
                    <td>
                      <a href={`${apiOrigin}/api/v1/files/${encodeURIComponent(f.id)}`} target="_blank" rel="noopener">
                        {f.filename}
                      </a>
                    </td>
                    <td class="wide-only">{f.type}</td>
                    <td>{size(f.size)}</td>
                    <td class="wide-only">{new Date(f.createdAt).toLocaleString()}</td>
                    <td>
                      <button type="button" class="danger outline small" aria-label={`Delete ${f.filename}`} onClick={() => setRemoving(f)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {removing && <Confirm title={`Delete ${removing.filename}?`} text="The file is removed from storage; links to it stop working." action="Delete" onConfirm={() => remove(removing)} onClose={() => setRemoving(undefined)} />}
    </section>
  );
}
