/** `npm run seed`: the sample data (infra/local/seed.ts) in DATA_DIR's tables, or ADMIN_TARGET / DYNAMODB_ENDPOINT's. */
import { apiUrl } from './admin/api-client.js';
import { openDatabase } from './admin/database.js';
import { describeSeed, seedDemo } from '../infra/local/seed.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.LOG_LEVEL ??= 'WARN';

const database = await openDatabase();
try {
  const result = await seedDemo();
  console.log(describeSeed(result, apiUrl()));
} catch (error) {
  console.error(`seed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await database.close();
}
