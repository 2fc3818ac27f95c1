/**
 * The dashboard's Content-Security-Policy lets the page reach the object store a presigned upload
 * goes to, and nothing else: the origin it names is the one the AWS SDK presigns for.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { describe, expect, it } from 'vitest';
import { dashboardCsp, storageOrigin } from '../../../functions/dashboard/files.js';

/** The origin of the URL the SDK presigns a POST for, as the upload family does on AWS (no endpoint). */
async function presignedOrigin(bucket: string, region: string): Promise<string> {
  const client = new S3Client({ region, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
  const post = await createPresignedPost(client, { Bucket: bucket, Key: 'pending/t/u/x/file.pdf', Expires: 60 });
  client.destroy();
  return new URL(post.url).origin;
}

describe('storageOrigin', () => {
  it.each([
    ['entityrecordapi-uploadsbucket1a2b3c-9xyzq8w7v6u5', 'eu-west-1'],
    ['entityrecordapi-uploadsbucket1a2b3c-9xyzq8w7v6u5', 'us-east-1'],
    ['my-uploads', 'ap-southeast-2'],
    ['my-uploads', 'cn-north-1'],
    ['dotted.bucket.name', 'eu-central-1'],
  ])('names the origin the SDK presigns for: bucket %s in %s', async (bucket, region) => {
    expect(storageOrigin({ bucket }, region)).toBe(await presignedOrigin(bucket, region));
  });

  it('is the configured endpoint\'s origin when there is one (s3rver, LocalStack)', () => {
    expect(storageOrigin({ bucket: 'uploads', s3Endpoint: 'http://127.0.0.1:41234' }, 'us-east-1')).toBe('http://127.0.0.1:41234');
    expect(storageOrigin({ bucket: 'uploads', s3Endpoint: 'http://localhost:4566/' }, 'us-east-1')).toBe('http://localhost:4566');
  });
});

describe('dashboardCsp', () => {
  it('adds the store to connect-src only, and keeps everything else to the page\'s own origin', () => {
    const csp = dashboardCsp('https://b.s3.eu-west-1.amazonaws.com');
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));

    expect(directives['connect-src']).toEqual(["'self'", 'https://b.s3.eu-west-1.amazonaws.com']);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp.match(/amazonaws/g)).toHaveLength(1);
  });
});
