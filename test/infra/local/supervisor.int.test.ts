/**
 * `npm start` supervises its engine: after a kill -9 of DynamoDB Local (its pid from
 * DATA_DIR/dynamodb-local.pid) health says `degraded` and requests get 503 with Retry-After,
 * then the engine is back on the same port and database within 30 s, with no hand restart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../support/server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'era-supervisor-'));
let server: TestServer | undefined;
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const enginePid = () => Number(readFileSync(join(dataDir, 'dynamodb-local.pid'), 'utf8').trim());

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start with its engine killed', () => {
  it('restarts DynamoDB Local and serves again within 30 s, reporting degraded meanwhile', async () => {
    // Arrange: npm start on its own engine (DYNAMODB_ENDPOINT empty), a record written before the kill.
    server = await startServer({ dynamoEndpoint: '', env: { DATA_DIR: dataDir } });
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'operator@test.local', password: 'operator-password-1' }),
    });
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const json = { 'Content-Type': 'application/json', Cookie: cookie };
    const before = await fetch(`${server.url}/api/v1/tags`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'before-the-kill' }) });
    const beforeId = ((await before.json()) as { data: { id: string } }).data.id;
    const killed = enginePid();
    // DynamoDB Local was seen to lose the first transactional write on a new database when
    // killed within milliseconds of answering it (docs/local-runtime.md); the restart is what is
    // tested here, so the kill comes a moment later.
    await new Promise((r) => setTimeout(r, 1000));

    // Act: kill -9 the engine, then poll health until it is ok again.
    process.kill(killed, 'SIGKILL');
    const killedAt = Date.now();
    const healthSeen = new Set<string>();
    let refused: Response | undefined;
    let recoveredAfter: number | undefined;
    while (Date.now() - killedAt < 30_000) {
      const health = await fetch(`${server.url}/api/health`);
      const body = (await health.json()) as { status: string };
      healthSeen.add(`${health.status} ${body.status}`);
      if (body.status === 'degraded' && !refused) {
        refused = await fetch(`${server.url}/api/v1/tags/${beforeId}`, { headers: json });
      }
      if (health.status === 200 && body.status === 'ok') {
        recoveredAfter = Date.now() - killedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const read = await fetch(`${server.url}/api/v1/tags/${beforeId}`, { headers: json });
    const created = await fetch(`${server.url}/api/v1/tags`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'after-the-kill' }) });
    const createdId = ((await created.json()) as { data: { id: string } }).data.id;
    const readCreated = await fetch(`${server.url}/api/v1/tags/${createdId}`, { headers: json });

    // Assert
    expect(recoveredAfter).toBeDefined();
    expect(recoveredAfter!).toBeLessThan(30_000);
    expect(healthSeen).toContain('503 degraded');
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused!.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: { name: string } }).data.name).toBe('before-the-kill');
    expect(created.status).toBe(201);
    expect(readCreated.status).toBe(200);
    expect(enginePid()).not.toBe(killed);
    expect(server.output()).toMatch(/DynamoDB Local stopped \(killed by SIGKILL\); restarting it/);

    // Cleanup: a stop still stops the restarted engine.
    const restarted = enginePid();
    await server.stop();
    server = undefined;
    await new Promise((r) => setTimeout(r, 500));
    expect(processAlive(restarted)).toBe(false);
  }, 150_000);
});
