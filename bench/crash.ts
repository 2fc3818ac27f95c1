/**
 * kill -9 rounds of `npm start` (a child process running infra/local/main.ts with its own DynamoDB
 * Local on a DATA_DIR of its own) with writes in flight, then a restart on the same DATA_DIR and a
 * check of every write ever acknowledged. Per round:
 * - four writers, each on its own records (so the expected state of every record is known): a
 *   create (every other one with an Idempotency-Key), a PATCH of one of its records, now and then
 *   a DELETE or a bulk DELETE of a few;
 * - one importer: POST /api/v1/import/tasks of 100 tasks with an Idempotency-Key, then a bulk
 *   DELETE of 20 of them; once an import and a few creates were acknowledged, the kill comes at a
 *   random point inside the next import (the import may still answer first: the bench reports
 *   the rounds whose kill cut an import off, i.e. the imports retried);
 * - after the restart: the killed run's engine is gone; every acknowledged create is there with its
 *   last acknowledged title (or one whose answer the crash cut off), every acknowledged delete is
 *   gone (LIST with ids=, 100 per request); an import and the creates cut off by the crash, retried
 *   with their Idempotency-Key, answer 201 (never 409), and the import then holds exactly its 100
 *   tasks (no duplicate, none missing).
 * Everything goes through HTTP. Used by bench/scenarios/crash.ts (40 rounds) and by the suite
 * (test/infra/local/crash.int.test.ts, one round).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeyOf, send } from './http.js';
import { startNpmStart } from './npm-start.js';


interface Server {
  url: string;
  child: ChildProcess;
}

async function startServer(dataDir: string, admin: { email: string; password: string }): Promise<Server> {
  const { child, listening } = startNpmStart(dataDir, admin, { LOG_LEVEL: 'ERROR' });
  return { url: await listening, child };
}

function killHard(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
    server.child.once('exit', () => resolve());
    server.child.kill('SIGKILL');
  });
}

function stopGently(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

/** What the client knows of one record: acknowledged state, and writes whose answer it never got. */
interface Known {
  title: string;
  /** Titles sent after the last acknowledged one, whose outcome is unknown (cut off). */
  maybeTitles: Set<string>;
  deleted: boolean;
  maybeDeleted: boolean;
  /** Writer that owns it (only its owner writes it, one request at a time). */
  owner: number;
}

export interface Tally {
  creates: number;
  updates: number;
  deletes: number;
  checks: number;
  lostCreates: number;
  undoneDeletes: number;
  revertedUpdates: number;
  /** Imports of 100 acknowledged (their tasks are counted in creates). */
  imports: number;
  examples: string[];
}

export interface CrashResult {
  rounds: number;
  tally: Tally;
  /** Acknowledged writes lost: creates missing, deletes undone, updates reverted. */
  lost: number;
  /** Imports the kill cut off (no answer came), retried with their key: one at most per round. */
  importRetries: number;
  importRetryFailures: number;
  createRetries: number;
  createRetryFailures: number;
  /** Killed runs whose DynamoDB Local was still running after the restart. */
  leftoverEngines: number;
  seconds: number;
  restartSeconds: number;
}

export const WRITERS = 4;

/** Runs `rounds` kill -9 rounds on a fresh DATA_DIR (removed afterwards). */
export async function crashRounds(rounds: number, log: (line: string) => void = () => {}): Promise<CrashResult> {
  const admin = { email: 'bench-crash@bench.local', password: `bench-${randomBytes(12).toString('hex')}` };
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-crash-'));
  const records = new Map<string, Known>();
  const tally: Tally = { creates: 0, updates: 0, deletes: 0, checks: 0, lostCreates: 0, undoneDeletes: 0, revertedUpdates: 0, imports: 0, examples: [] };
  let importRetries = 0;
  let importRetryFailures = 0;
  let createRetries = 0;
  let createRetryFailures = 0;
  let leftoverEngines = 0;
  let restartMs = 0;
  const started = performance.now();
  let server = await startServer(dataDir, admin);
  try {
    const auth = (await apiKeyOf(server, admin, 'bench crash')).key;

    for (let r = 0; r < rounds; r++) {
      const api = { url: server.url };
      let stopped = false;
      let importing = false;
      let importsDone = 0;
      let importMs = 500;
      const cutCreates = new Map<string, Record<string, unknown>>();
      const cutImports = new Map<string, { tasks: Record<string, unknown>[]; word: string }>();
      const ownAlive = (owner: number) => [...records].filter(([, k]) => k.owner === owner && !k.deleted && !k.maybeDeleted).map(([id]) => id);
      const pick = <T>(list: T[]): T | undefined => list[Math.floor(Math.random() * list.length)];

      const deleteOne = async (id: string) => {
        const known = records.get(id)!;
        known.maybeDeleted = true;
        const reply = await send(api, 'DELETE', `/api/v1/tasks/${id}`, auth);
        if (reply.status === 200) {
          known.deleted = true;
          known.maybeDeleted = false;
          tally.deletes++;
        }
      };
      const deleteMany = async (ids: string[]) => {
        for (const id of ids) records.get(id)!.maybeDeleted = true;
        const reply = await send(api, 'DELETE', '/api/v1/tasks', auth, { ids });
        if (reply.status !== 200) return;
        for (const id of reply.body.data.ids as string[]) {
          const known = records.get(id)!;
          known.deleted = true;
          known.maybeDeleted = false;
          tally.deletes++;
        }
        // Items the bulk request reports as failed were not deleted.
        for (const failure of reply.body.data.failures as { id: string }[]) records.get(failure.id)!.maybeDeleted = false;
      };

      const writer = async (n: number) => {
        for (let i = 0; !stopped; i++) {
          try {
            // Every other create carries an Idempotency-Key (the ones the crash cuts off are retried with it).
            const key = i % 2 === 0 ? randomUUID() : undefined;
            const body = { title: `crash ${r}.${n}.${i}`, priority: ['low', 'medium', 'high'][i % 3] };
            if (key) cutCreates.set(key, body);
            const made = await send(api, 'POST', '/api/v1/tasks', key ? { ...auth, 'Idempotency-Key': key } : auth, body);
            if (key) cutCreates.delete(key);
            if (made.status === 201) {
              records.set(made.body.data.id, { title: made.body.data.title, maybeTitles: new Set(), deleted: false, maybeDeleted: false, owner: n });
              tally.creates++;
            }
            const target = pick(ownAlive(n));
            if (target) {
              const known = records.get(target)!;
              const title = `upd ${r}.${n}.${i}`;
              known.maybeTitles.add(title);
              const reply = await send(api, 'PATCH', `/api/v1/tasks/${target}`, auth, { title });
              if (reply.status === 200) {
                known.title = title;
                known.maybeTitles.clear();
                tally.updates++;
              }
            }
            if (Math.random() < 0.3) {
              const victim = pick(ownAlive(n));
              if (victim) await deleteOne(victim);
            }
            if (Math.random() < 0.1) {
              const victims = ownAlive(n).slice(0, 5);
              if (victims.length) await deleteMany(victims);
            }
          } catch {
            return; // the connection died with the server
          }
        }
      };

      const importer = async () => {
        for (let i = 0; !stopped; i++) {
          const key = randomUUID();
          const word = `imp${randomBytes(6).toString('hex')}`;
          const tasks = Array.from({ length: 100 }, (_, j) => ({ title: `${word} ${j}`, status: ['todo', 'in_progress', 'completed'][j % 3] }));
          cutImports.set(key, { tasks, word });
          importing = true;
          const importStarted = performance.now();
          try {
            const reply = await send(api, 'POST', '/api/v1/import/tasks', { ...auth, 'Idempotency-Key': key }, { tasks });
            importing = false;
            cutImports.delete(key);
            if (reply.status !== 201) continue;
            importMs = performance.now() - importStarted;
            importsDone++;
            tally.imports++;
            const owner = WRITERS + 1 + ((r * 1000 + i) % 1_000_000);
            for (const task of reply.body.data.tasks as { id: string; title: string }[]) {
              records.set(task.id, { title: task.title, maybeTitles: new Set(), deleted: false, maybeDeleted: false, owner });
              tally.creates++;
            }
            await deleteMany(ownAlive(owner).slice(0, 20));
          } catch {
            return;
          }
        }
      };

      const writers = [...Array.from({ length: WRITERS }, (_, n) => writer(n)), importer()];
      // Run a while, and until an import and a few single creates were acknowledged however slow
      // the machine is, then kill at a random point inside the next import.
      const createsBefore = tally.creates;
      await new Promise((resolve) => setTimeout(resolve, 3_000 + Math.random() * 4_000));
      for (let waited = 0; (tally.creates - createsBefore - importsDone * 100 < 10 || importsDone < 1) && waited < 90_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      for (let waited = 0; importing && waited < 30_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
      for (let waited = 0; !importing && waited < 30_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * importMs * 0.9));
      const enginePid = Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8'));
      // Before the kill: no writer starts a request afterwards (one that was never sent would be
      // counted as cut off and retried).
      stopped = true;
      await killHard(server);
      await Promise.all(writers);

      const restartAt = performance.now();
      server = await startServer(dataDir, admin);
      restartMs += performance.now() - restartAt;
      if (isAlive(enginePid)) leftoverEngines++;

      // Every write ever acknowledged, read back 100 ids at a time.
      const ids = [...records.keys()];
      for (let i = 0; i < ids.length; i += 100) {
        const chunk = ids.slice(i, i + 100);
        const reply = await send(server, 'GET', `/api/v1/tasks?ids=${chunk.join(',')}&limit=100&fields=title`, auth);
        if (reply.status !== 200) throw new Error(`check: ${reply.status} ${JSON.stringify(reply.body)}`);
        const found = new Map((reply.body.data as { id: string; title: string }[]).map((t) => [t.id, t.title]));
        for (const id of chunk) {
          const known = records.get(id)!;
          const title = found.get(id);
          tally.checks++;
          if (known.deleted) {
            if (title !== undefined) {
              tally.undoneDeletes++;
              if (tally.examples.length < 10) tally.examples.push(`round ${r + 1}: acknowledged DELETE of ${id} undone`);
            }
            continue;
          }
          if (title === undefined) {
            if (known.maybeDeleted) {
              known.deleted = true;
              known.maybeDeleted = false;
              continue;
            }
            tally.lostCreates++;
            if (tally.examples.length < 10) tally.examples.push(`round ${r + 1}: acknowledged create of ${id} missing`);
            known.deleted = true;
            continue;
          }
          known.maybeDeleted = false;
          if (title !== known.title && !known.maybeTitles.has(title)) {
            tally.revertedUpdates++;
            if (tally.examples.length < 10) tally.examples.push(`round ${r + 1}: ${id} has "${title}", acknowledged "${known.title}"`);
          }
          known.title = title;
          known.maybeTitles.clear();
        }
      }

      // Requests the crash cut off, retried with their key: done (or replayed), never refused as in progress.
      for (const [key, { tasks, word }] of cutImports) {
        importRetries++;
        const reply = await send(server, 'POST', '/api/v1/import/tasks', { ...auth, 'Idempotency-Key': key }, { tasks });
        const count = reply.status === 201 ? await send(server, 'GET', `/api/v1/tasks?search=${word}&limit=1`, auth) : undefined;
        if (reply.status !== 201 || reply.body.data.imported !== 100 || count?.body.pagination.total !== 100) {
          importRetryFailures++;
          if (tally.examples.length < 10) tally.examples.push(`round ${r + 1}: import retry ${reply.status}, imported ${reply.body?.data?.imported}, ${count?.body?.pagination?.total} with its word`);
          continue;
        }
        const owner = -1 - r;
        for (const task of reply.body.data.tasks as { id: string; title: string }[]) {
          records.set(task.id, { title: task.title, maybeTitles: new Set(), deleted: false, maybeDeleted: false, owner });
        }
      }
      for (const [key, body] of cutCreates) {
        createRetries++;
        const reply = await send(server, 'POST', '/api/v1/tasks', { ...auth, 'Idempotency-Key': key }, body);
        if (reply.status !== 201) {
          createRetryFailures++;
          if (tally.examples.length < 10) tally.examples.push(`round ${r + 1}: create retry ${reply.status}`);
          continue;
        }
        records.set(reply.body.data.id, { title: reply.body.data.title, maybeTitles: new Set(), deleted: false, maybeDeleted: false, owner: -1 - r });
      }
      const lost = tally.lostCreates + tally.undoneDeletes + tally.revertedUpdates;
      log(`round ${r + 1}/${rounds}: ${records.size} records known, ${tally.checks} checks so far, ${lost} lost${cutImports.size ? '' : ' (no import cut off by the kill)'}`);
    }
  } finally {
    await stopGently(server);
    rmSync(dataDir, { recursive: true, force: true });
  }

  return {
    rounds,
    tally,
    lost: tally.lostCreates + tally.undoneDeletes + tally.revertedUpdates,
    importRetries,
    importRetryFailures,
    createRetries,
    createRetryFailures,
    leftoverEngines,
    seconds: (performance.now() - started) / 1000,
    restartSeconds: restartMs / rounds / 1000,
  };
}
