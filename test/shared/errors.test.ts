/**
 * The catalogue of error codes (shared/errors.ts): every code the source throws or answers is in
 * it, with the status it is answered with, and errors built from it carry their details and a
 * cause that never reaches the client.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  BadGatewayError,
  ConflictError,
  ERROR_CATALOGUE,
  InternalError,
  NotFoundError,
  PreconditionFailedError,
  ServiceUnavailableError,
  ValidationError,
  catalogueEntry,
  toApiError,
} from '../../shared/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Where the API's codes come from; dashboard/ is a client of the API (its codes are its own). */
const SOURCE_DIRS = ['shared', 'functions', 'plugins', 'infra', 'bin'];

/** Upper-case literals that look like codes and are not answered by the API, each with why. */
const NOT_API_CODES: Record<string, string> = {
  EFORBIDDENADDRESS: "the SSRF guard's Node-style error code: a webhook delivery failure, never an answer",
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...sourceFiles(rel));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.generated.ts')) out.push(rel);
  }
  return out;
}

/** The text of the call whose `(` is at `open`, up to its matching `)`. */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

interface Use {
  code: string;
  file: string;
  /** The status written next to the code, where the source spells one out. */
  status?: number;
}

const CODE = /'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)'/g;

/** Every code the source throws (an error class's arguments, `super(...)`, a GraphQL refusal) or answers (`code: 'X'`). */
function codeUses(): Use[] {
  const uses: Use[] = [];
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/(?:new [A-Z]\w*Error|\bsuper|\brefuse|ApiError\.of)\(/g)) {
      const call = callText(text, m.index + m[0].length - 1);
      // A construct's super(scope, id, {...props}) is not an error: errors' arguments are short.
      if (call.length > 600) continue;
      const status = /^\(\s*(\d{3}),\s*'/.exec(call)?.[1];
      // refuse(status, code, ...) of GraphQL; other functions of that name (a WAF rule's) are not errors.
      if (m[0] === 'refuse(' && !status) continue;
      const codes = [...call.matchAll(CODE)].map((c) => c[1]).filter((c) => c.length > 2 && !/^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD)$/.test(c));
      codes.forEach((code, i) => uses.push({ code, file, ...(i === 0 && status ? { status: Number(status) } : {}) }));
    }
    for (const m of text.matchAll(/\bcode(?:: [A-Za-z]+)? ?[:=] '([A-Z][A-Z0-9_]{2,})'/g)) {
      const before = text.slice(Math.max(0, m.index - 40), m.index);
      const status = /statusCode: '(\d{3})', $/.exec(before)?.[1];
      uses.push({ code: m[1], file, ...(status ? { status: Number(status) } : {}) });
    }
    // A default parameter: `code: ErrorCode = 'X'`.
    for (const m of text.matchAll(/\bcode: ErrorCode = '([A-Z][A-Z0-9_]{2,})'/g)) uses.push({ code: m[1], file });
  }
  return uses.filter((u) => !Object.hasOwn(NOT_API_CODES, u.code));
}

describe('the error catalogue', () => {
  const uses = codeUses();

  it('finds the codes the source throws and answers (the search itself works)', () => {
    const found = new Set(uses.map((u) => u.code));

    for (const code of ['TOO_MANY_STREAMS', 'AI_PROVIDER_ERROR', 'IMPORT_INCOMPLETE', 'INVALID_FILTER', 'LIMIT_EXCEEDED', 'QUERY_TOO_DEEP', 'BAD_USER_INPUT', 'GATEWAY_TIMEOUT']) {
      expect(found.has(code), code).toBe(true);
    }
  });

  it('holds every code thrown or answered in the source', () => {
    const missing = uses.filter((u) => !catalogueEntry(u.code)).map((u) => `${u.code} (${u.file})`);

    expect(missing).toEqual([]);
  });

  it('gives each code the status the source answers it with', () => {
    const wrong = uses
      .filter((u) => u.status !== undefined && catalogueEntry(u.code) && catalogueEntry(u.code)!.status !== u.status)
      .map((u) => `${u.code}: ${u.status} in ${u.file}, ${catalogueEntry(u.code)!.status} in the catalogue`);

    expect(wrong).toEqual([]);
  });

  it('has no code nobody answers', () => {
    const used = new Set(uses.map((u) => u.code));

    expect(Object.keys(ERROR_CATALOGUE).filter((code) => !used.has(code))).toEqual([]);
  });

  it('describes each code in one line with an error status and says whether a retry can help', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
      expect(entry.description).toMatch(/^[A-Z`].*\.$/);
      expect(entry.description).not.toContain('\n');
      expect(typeof entry.retry).toBe('boolean');
    }
  });
});

describe('errors built from the catalogue', () => {
  it('take their status from the catalogue', () => {
    expect(ApiError.of('PRECONDITION_FAILED', 'changed').status).toBe(412);
    expect(new ConflictError('full', 'LIMIT_EXCEEDED').status).toBe(409);
    expect(new BadGatewayError('failed', 'AI_PROVIDER_ERROR').status).toBe(502);
    expect(new NotFoundError().status).toBe(ERROR_CATALOGUE.NOT_FOUND.status);
    expect(new PreconditionFailedError('changed', '"v1"').headers).toEqual({ ETag: '"v1"' });
  });

  it('carry details and a cause, and never send the cause to the client', () => {
    const cause = new Error('ProvisionedThroughputExceededException: table records, secret internals');

    const error = ApiError.of('IMPORT_INCOMPLETE', '2 item(s) were not written', { details: { items: 2 }, cause });
    const body = JSON.stringify(error);

    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ items: 2 });
    expect(JSON.parse(body)).toEqual({ success: false, error: '2 item(s) were not written', code: 'IMPORT_INCOMPLETE', details: { items: 2 } });
    expect(body).not.toContain('secret internals');
  });

  it('keep what toApiError mapped as their cause', () => {
    const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
    const bug = new TypeError('x is undefined');

    const unavailable = toApiError(throttled);
    const internal = toApiError(bug);

    expect(unavailable).toBeInstanceOf(ServiceUnavailableError);
    expect(unavailable.cause).toBe(throttled);
    expect(internal).toBeInstanceOf(InternalError);
    expect(internal.cause).toBe(bug);
    expect(JSON.stringify(internal)).not.toContain('x is undefined');
  });

  it('keep the subclasses\' constructors and statuses', () => {
    expect(new ValidationError({ title: 'is required' }).status).toBe(422);
    expect(new ValidationError({ title: 'is required' }).code).toBe('VALIDATION_FAILED');
  });
});
