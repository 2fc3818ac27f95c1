import { describe, expect, it } from 'vitest';
import { displayFilename, safeFilename } from '../../../shared/uploads/filename.js';

describe('safeFilename', () => {
  it.each([
    ['photo.png', 'photo.png'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini'],
    ['..', 'file'],
    ['.hidden.png', 'hidden.png'],
    ['Résumé final (2).pdf', 'Resume_final_2_.pdf'],
    ['a..b.png', 'a.b.png'],
    ['', 'file'],
    ['名前.jpg', 'jpg'],
  ])('turns %j into %j: only [A-Za-z0-9._-], no leading dot, no directory', (raw, safe) => {
    expect(safeFilename(raw)).toBe(safe);
  });

  it('keeps the extension when it shortens a long name to 100 characters', () => {
    const safe = safeFilename(`${'x'.repeat(300)}.pdf`);
    expect(safe).toHaveLength(100);
    expect(safe.endsWith('.pdf')).toBe(true);
  });
});

describe('displayFilename', () => {
  it('keeps the name as given without directories or control characters', () => {
    expect(displayFilename('dir/Résumé\u0000\n final.pdf')).toBe('Résumé final.pdf');
    expect(displayFilename(undefined)).toBe('file');
  });
});
