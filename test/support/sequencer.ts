/**
 * The order test files start in. The run is as long as its last file's end: the integration
 * files go first, the longest of them leading, so that none of them starts near the end; then
 * test/infra/aws/ (cdk) and the unit files, short ones that fill the workers as they free up.
 * Within a project a file's duration comes from vitest's cache of the last run (none on a clean
 * clone, as on CI), else from LONG below, else its size (larger first).
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const PROJECTS = ['integration', 'cdk', 'unit'];

/** The integration files that take longest (tens of seconds each on a 2-core machine), longest first. */
const LONG = [
  'test/bin/admin.int.test.ts',
  'test/functions/dashboard/dashboard.int.test.ts',
  'test/shared/migrations/migrations.int.test.ts',
  'test/functions/webhooks/concurrency.int.test.ts',
  'test/bin/events-redrive.int.test.ts',
  'test/shared/migrations/refused.int.test.ts',
  'test/shared/migrations/write-shards.int.test.ts',
  'test/infra/local/seed.int.test.ts',
  'test/infra/local/crash.int.test.ts',
  'test/infra/local/main.int.test.ts',
  'test/infra/local/admin-password.int.test.ts',
  'test/functions/bootstrap/lifecycle.int.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const key = (spec: TestSpecification) => `${spec.project.name}:${spec.moduleId.slice(config.root.length + 1)}`;
    const rank = (spec: TestSpecification) => {
      const at = LONG.indexOf(spec.moduleId.slice(config.root.length + 1));
      return at === -1 ? LONG.length : at;
    };
    const project = (spec: TestSpecification) => {
      const at = PROJECTS.indexOf(spec.project.name);
      return at === -1 ? PROJECTS.length : at;
    };
    return [...files].sort((a, b) => {
      if (project(a) !== project(b)) return project(a) - project(b);
      const [lastA, lastB] = [cache.getFileTestResults(key(a)), cache.getFileTestResults(key(b))];
      if (lastA && lastB) return lastB.duration - lastA.duration;
      if (rank(a) !== rank(b)) return rank(a) - rank(b);
      return (cache.getFileStats(key(b))?.size ?? 0) - (cache.getFileStats(key(a))?.size ?? 0);
    });
  }
}
