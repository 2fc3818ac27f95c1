/**
 * Local object storage for uploads: s3rver, an S3-compatible server, with its objects in
 * DATA_DIR/s3 (or a temporary directory removed on stop when there is no DATA_DIR). With
 * S3_ENDPOINT (or AWS_ENDPOINT_URL_S3) naming another server, only the bucket is ensured there.
 * The handlers reach either through the AWS SDK, exactly as they reach S3 on AWS.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { config, resetConfig } from '../../shared/config.js';
import { resetS3Client, s3 } from '../../shared/uploads/storage.js';

export interface LocalObjectStorage {
  endpoint: string;
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

export async function startObjectStorage(options: { dataDir?: string; host: string }): Promise<LocalObjectStorage> {
  const given = config().uploads.s3Endpoint;
  if (given) {
    await ensureBucket();
    return { endpoint: given, stop: async () => resetS3Client() };
  }
  const directory = options.dataDir ? join(options.dataDir, 's3') : mkdtempSync(join(tmpdir(), 'entity-record-api-s3-'));
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: options.host,
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: config().uploads.bucket, configs: [CORS] }],
  });
  const address = await server.run();
  // A wildcard listen address is not a host a presigned URL can name.
  const endpoint = `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${address.port}`;
  // Handlers read the endpoint through config(), exactly as they would read S3_ENDPOINT.
  process.env.S3_ENDPOINT = endpoint;
  resetConfig();
  resetS3Client();
  return {
    endpoint,
    stop: async () => {
      resetS3Client();
      const closed = server.close();
      // Clients' keep-alive sockets would hold the close for seconds.
      server.httpServer?.closeAllConnections();
      await closed;
      if (!options.dataDir) rmSync(directory, { recursive: true, force: true });
    },
  };
}
