import { describe, expect, it } from 'vitest';
import { subRequestsRun } from '../../../functions/batch/counting.js';
import { findRoute } from '../../../shared/routes.js';

const batchRoute = findRoute('POST', '/api/v1/batch')!;
const valid = Buffer.from(JSON.stringify({ requests: [{ id: 'a', method: 'GET', path: '/users/me' }] }));
const json = { 'content-type': 'application/json' };

describe('what a batch counts against the rate limit', () => {
  it('leaves a runnable batch to its sub-requests', () => {
    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: valid })).toBeGreaterThan(0);
  });

  it('counts a batch that may be answered without running any sub-request', () => {
    expect(subRequestsRun({ route: batchRoute, headers: { ...json, 'idempotency-key': 'k' }, rawBody: valid })).toBe(0);
    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: Buffer.from('{"requests": []}') })).toBe(0);
    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: Buffer.from('{not json') })).toBe(0);
    expect(subRequestsRun({ route: batchRoute, headers: { 'content-type': 'text/plain' }, rawBody: valid })).toBe(0);
    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: undefined })).toBe(0);
  });

  it('counts a batch whose sub-requests all answer without running (unknown paths, a nested batch)', () => {
    const unroutable = Buffer.from(JSON.stringify({ requests: [{ id: 'a', method: 'GET', path: '/no/such/path/here' }, { id: 'b', method: 'POST', path: '/batch' }] }));
    const mixed = Buffer.from(JSON.stringify({ requests: [{ id: 'a', method: 'GET', path: '/no/such/path/here' }, { id: 'b', method: 'GET', path: '/users/me' }] }));

    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: unroutable })).toBe(0);
    expect(subRequestsRun({ route: batchRoute, headers: json, rawBody: mixed })).toBeGreaterThan(0);
  });

  it('counts every other request', () => {
    expect(subRequestsRun({ route: findRoute('GET', '/api/v1/users/me')!, headers: {}, rawBody: undefined })).toBe(0);
  });
});
