import { describe, expect, it } from 'vitest';
import { ResponseValidator } from '../../support/openapi.js';

const doc = {
  openapi: '3.1.0',
  paths: {
    '/api/v1/things/{id}': {
      get: {
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          404: { $ref: '#/components/responses/NotFound' },
        },
      },
    },
    '/api/v1/things/mine': { get: { responses: { 200: { description: 'ok' } } } },
  },
  components: {
    schemas: {
      Thing: { type: 'object', required: ['id', 'at'], properties: { id: { type: 'string' }, at: { type: 'string', format: 'date-time' }, tags: { type: ['array', 'null'] } } },
      Error: { type: 'object', required: ['success', 'code'], properties: { success: { const: false }, code: { type: 'string' } } },
    },
    responses: { NotFound: { description: 'missing', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
  },
};

describe('ResponseValidator (the response check of the OpenAPI tests)', () => {
  it('accepts a body that matches the referenced schema', () => {
    const validator = new ResponseValidator(doc);

    expect(() => validator.check('GET', '/api/v1/things/t1', 200, 'application/json; charset=utf-8', { id: 't1', at: '2026-01-01T00:00:00Z', tags: null })).not.toThrow();
  });

  it('refuses a body that breaks the schema through a $ref, naming the problem', () => {
    const validator = new ResponseValidator(doc);

    expect(() => validator.check('GET', '/api/v1/things/t1', 200, 'application/json', { id: 't1', at: 'yesterday' })).toThrow(/must match format "date-time"/);
    expect(() => validator.check('GET', '/api/v1/things/t1', 404, 'application/json', { success: true })).toThrow(/does not match/);
  });

  it('refuses an undocumented status, media type or path', () => {
    const validator = new ResponseValidator(doc);

    expect(() => validator.check('GET', '/api/v1/things/t1', 500, 'application/json', {})).toThrow(/status 500 is not documented/);
    expect(() => validator.check('GET', '/api/v1/things/t1', 200, 'text/html', '<p>')).toThrow(/media type 'text\/html'/);
    expect(() => validator.check('GET', '/api/v2/else', 200, 'application/json', {})).toThrow(/no path/);
  });

  it('prefers a static path over a template', () => {
    const validator = new ResponseValidator(doc);

    expect(validator.templateOf('/api/v1/things/mine')).toBe('/api/v1/things/mine');
    expect(validator.templateOf('/api/v1/things/other')).toBe('/api/v1/things/{id}');
  });
});
