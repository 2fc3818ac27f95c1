import { describe, expect, it } from 'vitest';
import { api } from '../../support/http.js';

describe('the reference page', () => {
  it('answers at /api/docs/ as at /api/docs, its assets named by absolute path', async () => {
    const bare = await api('GET', '/api/docs');
    const slashed = await api('GET', '/api/docs/');

    expect(slashed.status).toBe(200);
    expect(slashed.text).toBe(bare.text);
    expect(slashed.text).toContain('src="/api/docs/init.js"');
    const init = await api('GET', '/api/docs/init.js');
    expect(init.text).toContain("new URL('../v1/openapi.json', document.currentScript.src)");
  });
});
