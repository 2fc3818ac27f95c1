/**
 * Local object storage for uploads: s3rver, an S3-compatible server, with its objects in
 * DATA_DIR/s3 (or a temporary directory removed on stop when there is no DATA_DIR). With
 * S3_ENDPOINT (or AWS_ENDPOINT_URL_S3) naming another server, only the bucket is ensured there.
 * The handlers reach either through the AWS SDK, exactly as they reach S3 on AWS. npm start
 * supervises s3rver (supervisor.ts): a server that closes is started again on the same port.
 * s3rver listens on 127.0.0.1 whatever HOST says: it answers unsigned requests, so anyone who
 * reached it could list and read every tenant's files.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { config, resetConfig } from '../../shared/config.js';
import { resetS3Client, s3 } from '../../shared/uploads/storage.js';
import type { Running } from './supervisor.js';

export interface LocalObjectStorage {
  endpoint: string;
  /** For the supervisor: the server running (absent when S3_ENDPOINT names another server). */
  running?(): Running;
  restart?(): Promise<Running>;
  /** The s3rver instance now running (tests stop it to see it come back). */
  server?(): S3rver;
  stop(): Promise<void>;
}

/** Lets a page on another origin POST a presigned form and read what it gets back. */
const CORS = `<CORSConfiguration>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>POST</AllowedMethod>
    <AllowedHeader>*</AllowedHeader>
  </CORSRule>
</CORSConfiguration>`;

async function ensureBucket(): Promise<void> {
  try {
    await s3().send(new CreateBucketCommand({ Bucket: config().uploads.bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}

/** Where s3rver listens, and the host of the presigned URLs the API hands out. */
export const OBJECT_STORAGE_HOST = '127.0.0.1';

/** Runs s3rver on `port` (0: any); `ended` settles when its server closes without being asked to. */
async function runServer(directory: string, port: number): Promise<{ server: S3rver; port: number; ended: Promise<string> }> {
  const server = new S3rver({
    address: OBJECT_STORAGE_HOST,
    port,
    directory,
    silent: true,
    configureBuckets: [{ name: config().uploads.bucket, configs: [CORS] }],
  });
  const address = await server.run();
  const ended = new Promise<string>((resolveEnded) => {
    server.httpServer?.once('close', () => resolveEnded('its server closed'));
    server.httpServer?.once('error', (error) => resolveEnded(error.message));
  });
  return { server, port: address.port, ended };
}

export async function startObjectStorage(options: { dataDir?: string }): Promise<LocalObjectStorage> {
  const given = config().uploads.s3Endpoint;
  if (given) {
    await ensureBucket();
    return { endpoint: given, stop: async () => resetS3Client() };
  }
  const directory = options.dataDir ? join(options.dataDir, 's3') : mkdtempSync(join(tmpdir(), 'entity-record-api-s3-'));
  mkdirSync(directory, { recursive: true });
  let current = await runServer(directory, 0);
  const port = current.port;
  const endpoint = `http://${OBJECT_STORAGE_HOST}:${port}`;
  // Handlers read the endpoint through config(), exactly as they would read S3_ENDPOINT.
  process.env.S3_ENDPOINT = endpoint;
  resetConfig();
  resetS3Client();
  let stopped = false;
  return {
    endpoint,
    running: () => ({ ended: current.ended }),
    // The same port and directory: presigned URLs already handed out keep working.
    restart: async () => {
      if (stopped) throw new Error('object storage was stopped');
      current = await runServer(directory, port);
      return { ended: current.ended };
    },
    server: () => current.server,
    stop: async () => {
      stopped = true;
      resetS3Client();
      const { server } = current;
      if (server.httpServer?.listening) {
        const closed = server.close();
        // Clients' keep-alive sockets would hold the close for seconds.
        server.httpServer.closeAllConnections();
        await closed;
      }
      if (!options.dataDir) rmSync(directory, { recursive: true, force: true });
    },
  };
}
