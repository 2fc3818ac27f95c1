/**
 * The uploads bucket: private (every public access blocked, TLS only, SSE-S3), CORS for the
 * browser's presigned POSTs from the API's own origin (the dashboard's page) and ALLOWED_ORIGINS,
 * presigned objects never completed (under
 * `pending/`) expired after a day. The upload function may read, write and delete objects and
 * list the bucket (without ListBucket, HeadObject answers 403 for a missing key instead of 404);
 * no other function touches it.
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { PENDING_PREFIX } from '../../shared/uploads/limits.js';

export interface UploadsProps {
  /** The upload family's function; undefined when that family is not deployed. */
  uploadFunction?: lambda.Function;
  /** Origins whose pages may POST presigned forms (ALLOWED_ORIGINS). */
  allowedOrigins: readonly string[];
  /** The API's own origin, where the dashboard is served (`https://<id>.execute-api.<region>.amazonaws.com`). */
  apiOrigin?: string;
  /**
   * The dashboard family's function: told the bucket, so that its pages' Content-Security-Policy
   * names the bucket's endpoint in connect-src (functions/dashboard/files.ts). No access to it.
   */
  dashboardFunction?: lambda.Function;
}

export class Uploads extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: UploadsProps) {
    super(scope, id);
    const origins = [...(props.apiOrigin ? [props.apiOrigin] : []), ...props.allowedOrigins];
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      cors: origins.length
        ? [
            {
              allowedOrigins: origins,
              allowedMethods: [s3.HttpMethods.POST, s3.HttpMethods.GET],
              allowedHeaders: ['*'],
              maxAge: 3000,
            },
          ]
        : undefined,
      lifecycleRules: [
        { id: 'expire-never-completed', prefix: PENDING_PREFIX, expiration: Duration.days(1) },
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    const fn = props.uploadFunction;
    if (fn) {
      fn.addEnvironment('UPLOAD_BUCKET', this.bucket.bucketName);
      this.bucket.grantPut(fn);
      this.bucket.grantRead(fn);
      this.bucket.grantDelete(fn);
    }
    props.dashboardFunction?.addEnvironment('UPLOAD_BUCKET', this.bucket.bucketName);
    new CfnOutput(scope, 'UploadBucketName', { value: this.bucket.bucketName, description: 'S3 bucket of uploaded files' });
  }
}
