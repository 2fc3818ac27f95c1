/** Records the DynamoDB commands the shared client sends while some work runs (a client middleware). */
import { db } from '../shared/data/client.js';

export interface SentCommand {
  /** The SDK's command name, e.g. GetCommand. */
  name: string;
  /** The table, `transaction` for TransactWriteItems, or the tables of a batch joined by '+'. */
  table: string;
}

let recorders = 0;

export async function recordCommands(work: () => Promise<unknown>): Promise<SentCommand[]> {
  const sent: SentCommand[] = [];
  const stack = db().middlewareStack;
  const name = `benchCommandRecorder${++recorders}`;
  stack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; TransactItems?: unknown[]; RequestItems?: Record<string, unknown> };
      const table = input.TableName ?? (input.TransactItems ? 'transaction' : input.RequestItems ? Object.keys(input.RequestItems).join('+') : '?');
      sent.push({ name: context.commandName ?? 'unknown', table });
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await work();
    // Let anything fire-and-forget (key usage) reach the client before counting.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    stack.remove(name);
  }
  return sent;
}

/** How many of each command were sent while `work` ran. */
export async function countCommands(work: () => Promise<unknown>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const { name } of await recordCommands(work)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}
