/**
 * File names from clients are data, never a path: the S3 key carries a reduced copy (letters,
 * digits, dot, dash, underscore), and the name as given is kept, cleaned of control characters,
 * as the record's `filename`.
 */
const MAX_NAME = 255;
const MAX_SAFE = 100;

/** The last path segment of a name, without control characters. */
function baseName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  return base.normalize('NFC').replace(/[\u0000-\u001f\u007f]/g, '').trim();
}

/** The name as given, without any directory part or control characters, at most 255 characters. */
export function displayFilename(raw: string | undefined): string {
  return (baseName(raw) || 'file').slice(0, MAX_NAME);
}

/**
 * A name safe as the last segment of an S3 key and in a Content-Disposition header: only
 * [A-Za-z0-9._-], no leading dot (so never `.` or `..`), at most 100 characters, keeping the
 * extension when shortened.
 */
export function safeFilename(raw: string | undefined): string {
  const ascii = baseName(raw)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[._-]+/, '');
  if (!ascii) return 'file';
  if (ascii.length <= MAX_SAFE) return ascii;
  const dot = ascii.lastIndexOf('.');
  const ext = dot > 0 && ascii.length - dot <= 10 ? ascii.slice(dot) : '';
  return ascii.slice(0, MAX_SAFE - ext.length) + ext;
}
