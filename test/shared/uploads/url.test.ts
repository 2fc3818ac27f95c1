import { describe, expect, it } from 'vitest';
import { fileUrl } from '../../../shared/uploads/url.js';

describe('fileUrl', () => {
  it('keeps the base path the caller used (a stage, a custom domain mapping), and none locally', () => {
    expect(fileUrl({ basePath: '/prod' }, 'upl_0123')).toBe('/prod/api/v1/files/upl_0123');
    expect(fileUrl({ basePath: '/v2' }, 'upl_0123')).toBe('/v2/api/v1/files/upl_0123');
    expect(fileUrl({}, 'upl_0123')).toBe('/api/v1/files/upl_0123');
  });
});
