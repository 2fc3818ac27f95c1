/**
 * Migrations on AWS, run by `cdk deploy` (infra/aws/migration.ts): one self-continuing function,
 * the same runner as `npm start` (shared/migrations/runner.ts).
 *
 * - As the onEvent handler of the custom resource `Custom::EntityMigrations` (Create, Update, after
 *   the API's functions are updated): records each entity's target layout (prepareEntity), and if
 *   any migration is open, invokes itself asynchronously with `{action: 'run'}`. Delete: nothing.
 * - `{action: 'run'}`: waits until MIGRATION_SETTLE_SECONDS after the targets were recorded (every
 *   API function then writes with them: shared/migrations/live-layouts.ts MAX_STALE_MS), then runs each
 *   open migration until one minute before its own timeout, the Scan segments in parallel, saving
 *   each segment's position after every page; if work is left, it invokes itself again and ends.
 *   A crash or a timeout loses at most a page per segment: the next invocation (Lambda retries an
 *   asynchronous invocation twice; the next deploy starts one too) continues from the saved keys.
 * Progress: a log line per entity every 10 seconds and the CloudWatch metrics (embedded metric
 * format) MigrationRecordsProcessed and MigrationRecordsTotal, dimension Entity.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { loadLogger, logger } from '../../shared/logger.js';
import { allEntities, loadRegistry } from '../../shared/registry/index.js';
import { runMigration } from '../../shared/migrations/runner.js';
import { checkEntity, prepareEntity } from '../../shared/migrations/prepare.js';
import { readState } from '../../shared/migrations/state.js';

export const PHYSICAL_RESOURCE_ID = 'entity-migrations';
/** Kept free at the end of an invocation: the page under way and the self-invocation. */
const RESERVE_MS = 60_000;

interface RunEvent {
  action: 'run';
  /** Epoch ms before which the pass must not start. */
  notBefore?: number;
}

let lambdaClient: LambdaClient | undefined;

async function continueLater(event: RunEvent): Promise<void> {
  lambdaClient ??= new LambdaClient({});
  await lambdaClient.send(new InvokeCommand({ FunctionName: process.env.AWS_LAMBDA_FUNCTION_NAME, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(event)) }));
}

function metric(entity: string, processed: number, total: number | undefined): void {
  // CloudWatch embedded metric format: one log line becomes the metrics.
  console.log(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [{ Namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'EntityRecordApi', Dimensions: [['Entity']], Metrics: [{ Name: 'MigrationRecordsProcessed', Unit: 'Count' }, { Name: 'MigrationRecordsTotal', Unit: 'Count' }] }],
      },
      Entity: entity,
      MigrationRecordsProcessed: processed,
      MigrationRecordsTotal: total ?? 0,
    }),
  );
}

async function prepare(): Promise<number> {
  let open = 0;
  // A change no migration makes fails the deploy (rolled back) before any target is recorded.
  for (const entity of allEntities()) await checkEntity(entity);
  for (const entity of allEntities()) {
    const state = await prepareEntity(entity, Number(process.env.MIGRATION_SEGMENTS ?? 0) || undefined);
    logger.info('migration target', { entity: entity.slug, state: state.state, run: state.run, changes: state.changes });
    if (state.state === 'pending' || state.state === 'running') open += 1;
  }
  return open;
}

async function run(event: RunEvent, context: Context): Promise<void> {
  const settleUntil = event.notBefore ?? 0;
  const wait = settleUntil - Date.now();
  if (wait > 0) {
    if (wait > context.getRemainingTimeInMillis() - RESERVE_MS) return continueLater(event);
    await new Promise((r) => setTimeout(r, wait));
  }
  const deadline = Date.now() + context.getRemainingTimeInMillis() - RESERVE_MS;
  let open = false;
  for (const entity of allEntities()) {
    const before = await readState(entity.slug);
    if (!before || (before.state !== 'pending' && before.state !== 'running')) continue;
    let logged = 0;
    const after = await runMigration(entity, {
      deadline,
      concurrency: Number(process.env.MIGRATION_CONCURRENCY ?? 0) || 16,
      onProgress: ({ processed, total, added }) => {
        if (Date.now() - logged < 10_000) return;
        logged = Date.now();
        logger.info('migration progress', { entity: entity.slug, processed, total, added });
        metric(entity.slug, processed, total);
      },
    });
    if (after) metric(entity.slug, after.processed, after.total);
    logger.info('migration', { entity: entity.slug, state: after?.state, processed: after?.processed, total: after?.total });
    if (after && (after.state === 'pending' || after.state === 'running')) open = true;
    if (Date.now() > deadline) {
      open = true;
      break;
    }
  }
  if (open) await continueLater({ action: 'run' });
}

export async function handler(event: CloudFormationCustomResourceEvent | RunEvent, context: Context): Promise<{ PhysicalResourceId: string; Data?: Record<string, unknown> } | void> {
  await loadLogger();
  await loadRegistry();
  if ('action' in event) return run(event, context);
  if (event.RequestType === 'Delete') return { PhysicalResourceId: PHYSICAL_RESOURCE_ID };
  const open = await prepare();
  const settle = Number(process.env.MIGRATION_SETTLE_SECONDS ?? 30) * 1000;
  if (open) await continueLater({ action: 'run', notBefore: Date.now() + settle });
  return { PhysicalResourceId: PHYSICAL_RESOURCE_ID, Data: { OpenMigrations: open } };
}
