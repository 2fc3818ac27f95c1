import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

/**
 * Three projects (docs/CONTRIBUTING.md, "Running the tests"):
 * - unit: `*.test.ts`, no I/O, each file in a fresh process; no engine is started for them alone
 *   (`npm run test:unit`);
 * - cdk: test/infra/aws/, the stack synthesized offline. These files share their worker process
 *   (isolate: false): loading aws-cdk-lib and warming it up once instead of once a file takes the
 *   CPU they use from about 135 s to 45 s. They hold no state of their own between files (a test
 *   that sets an environment variable puts it back);
 * - integration: `*.int.test.ts`, over HTTP to the local runtime on DynamoDB Local, which
 *   test/support/global-setup.ts starts once for them.
 */
export default defineConfig({
  test: {
    setupFiles: ['test/support/schema-compiler.ts'],
    pool: 'forks',
    // Three on two cores: much of an integration file's time is spent waiting (on the server, the
    // engine, a receiver, a timer), and a third file fills it (9m17s → 8m29s on a 2-core machine).
    maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // In-process tests log nothing; the server under test logs at its own level (test/support/server.ts).
    env: { LOG_LEVEL: 'SILENT', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.int.test.ts', 'test/infra/aws/**'], globalSetup: ['test/support/temp-folder.ts'] },
      },
      {
        extends: true,
        test: { name: 'cdk', include: ['test/infra/aws/**/*.test.ts'], exclude: ['test/**/*.int.test.ts'], isolate: false, globalSetup: ['test/support/temp-folder.ts'] },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.int.test.ts'], globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});
