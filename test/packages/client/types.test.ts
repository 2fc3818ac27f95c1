/**
 * The client's types are generated from the current document (a stale src/schema.generated.ts fails here),
 * and they catch a wrong field name at compile time.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSchemaSource } from '../../../packages/client/scripts/schema-source.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CLIENT = join(ROOT, 'packages/client/src/index.ts');
const dir = mkdtempSync(join(tmpdir(), 'client-types-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function compile(files: Record<string, string>): string[] {
  const names = Object.entries(files).map(([name, text]) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  });
  const program = ts.createProgram(names, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const program = (body: string) => `import { createClient, type Schemas } from ${JSON.stringify(CLIENT)};
const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'sk_test_x' });
export async function run() {
  ${body}
}
`;

describe('the client types', () => {
  it('are up to date with the OpenAPI document', async () => {
    const committed = readFileSync(join(ROOT, 'packages/client/src/schema.generated.ts'), 'utf8');

    expect(committed === (await generateSchemaSource()), 'packages/client/src/schema.generated.ts is stale: run npm run client:generate').toBe(true);
  }, 30_000);

  it('compile correct calls and refuse a wrong field name, in a body and in an answer', () => {
    const errors = compile({
      'right.ts': program(`const created = await client.POST('/api/v1/tasks', { body: { title: 'ok', priority: 'high' } });
  const body: Schemas['TaskCreate'] = { title: 'ok', status: 'todo' };
  return [created.data?.data.title, body];`),
      'wrong-body.ts': program(`const body: Schemas['TaskCreate'] = { title: 'ok', priorty: 'high' };
  return client.POST('/api/v1/tasks', { body });`),
      'wrong-answer.ts': program(`const listed = await client.GET('/api/v1/tasks', { params: { query: { limit: 5 } } });
  return listed.data?.data[0].titel;`),
    });

    expect(errors).toHaveLength(2);
    expect(errors).toEqual(expect.arrayContaining([expect.stringContaining("'priorty' does not exist in type"), expect.stringContaining("Property 'titel' does not exist")]));
  }, 60_000);
});
