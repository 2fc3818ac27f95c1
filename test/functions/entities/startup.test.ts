/**
 * A bad definition stops the entities function at start-up (Lambda init, or the local runtime
 * loading the handler), with a message naming the entity and the problem. The definition is
 * written next to the built-in ones under a name starting with `_` (which directory listing
 * skips, so other processes are not affected) and named through ENTITY_FILES, as a deployed
 * bundle names its files.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { entityFileNames } from '../../../shared/registry/index.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const name = `_bad-${randomBytes(4).toString('hex')}`;
const file = `${ROOT}shared/registry/entities/${name}.ts`;

afterAll(() => rmSync(file, { force: true }));

function startHandler(entityFiles: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "await import('./functions/entities/handler.ts'); console.log('started');"], {
    cwd: ROOT,
    env: { ...process.env, ENTITY_FILES: entityFiles, LOG_LEVEL: 'SILENT' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('entities function start-up', () => {
  it('starts with every definition of the registry', () => {
    const result = startHandler(entityFileNames().join(','));

    expect(result.stdout).toContain('started');
    expect(result.status).toBe(0);
  });

  it('does not start when a definition is bad, and says which entity and why', () => {
    writeFileSync(
      file,
      `export default ${JSON.stringify({
        name: 'gadget',
        slug: 'gadgets',
        tableName: 'gadgets',
        idFormat: { type: 'prefixed', prefix: 'gad' },
        fields: { size: { type: 'enum', values: [] }, title: { type: 'string', required: true } },
        access: { public: false, shared: true },
      })};\n`,
    );

    const result = startHandler(`tasks,${name}`);

    expect(result.status).not.toBe(0);
    expect(result.stdout).not.toContain('started');
    expect(result.stderr).toContain(`Invalid entity definition: shared/registry/entities/${name}.ts entity 'gadgets': field 'size': an enum needs values`);
  });
});
