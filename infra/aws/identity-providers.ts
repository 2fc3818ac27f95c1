/**
 * The identity providers whose tokens the API accepts on AWS (docs/deploying-on-aws.md, "Signing
 * in with your identity provider"): their AUTH_OIDC_ISSUERS entries, passed to every family's
 * function. Any mix of:
 *
 * - `cognito=true`: an Amazon Cognito user pool created with the stack, with an app client for
 *   the console (authorization code + PKCE, no client secret, callback on the API's own URL), a
 *   hosted sign-in domain, an `admin` group (members are admins of this API) and a `tenant`
 *   attribute only administrators can set (`custom:tenant`; without it, the default tenant).
 *   Self sign-up is off, passwords are strong, MFA (TOTP) is required unless cognitoMfa=optional.
 * - `cognitoUserPoolId` + `cognitoClientId`: an existing pool (any region), its issuer derived
 *   from the id; register the API's callback URL at its app client yourself.
 * - `oidcIssuers`: any OpenID Connect issuers, as AUTH_OIDC_ISSUERS entries (Okta, Entra ID,
 *   Auth0, Google...).
 *
 * Everything is known at synth time but the created pool's ids, which CloudFormation resolves:
 * `cdk synth` stays offline. The callback URL is built from the REST API's id and its stage name
 * (not `api.url`, which names the stage resource: the functions would depend on themselves).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { oidcIssuers } from '../../shared/auth/oidc-config.js';
import { DEFAULT_TENANT_ID } from '../../shared/data/index.js';
import { booleanContext } from './observability.js';

type ContextGetter = (key: string) => unknown;

export interface IdentityProviderOptions {
  /** A user pool created with the stack. */
  cognito?: {
    /** The hosted sign-in domain's prefix (https://<prefix>.auth.<region>.amazoncognito.com); default from the stack name and account. */
    domainPrefix?: string;
    /** `required` (default): every user sets up TOTP at first sign-in; `optional`: each user may. */
    mfa?: 'required' | 'optional';
    /** `plus`: Cognito's threat protection (compromised credentials, adaptive authentication), billed per monthly active user. */
    featurePlan?: 'essentials' | 'plus';
    /** More console URLs to accept (a custom domain's `https://api.example.com/api/v1/auth/oidc/callback`). */
    callbackUrls?: string[];
  };
  /** An existing user pool and its app client. */
  cognitoUserPool?: { userPoolId: string; clientId: string };
  /** Entries of AUTH_OIDC_ISSUERS, as given. */
  issuers?: Record<string, unknown>[];
}

const POOL_ID = /^([a-z]{2}(?:-[a-z]+)+-\d)_[0-9A-Za-z]+$/;
const DOMAIN_PREFIX = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Claims of Cognito's tokens: the tenant attribute, the groups (an `admin` group makes admins). */
const COGNITO_CLAIMS = { tenant: 'custom:tenant', role: 'cognito:groups' };

function optionalString(get: ContextGetter, key: string): string | undefined {
  const value = get(key);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context "${key}" must be a string, got ${JSON.stringify(value)}`);
  return value.trim();
}

function jsonContext(get: ContextGetter, key: string): unknown {
  const value = get(key);
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** The options from CDK context (bin/app.ts); throws on a value that cannot be meant. */
export function identityProvidersFromContext(get: ContextGetter): IdentityProviderOptions {
  const options: IdentityProviderOptions = {};
  if (booleanContext(get, 'cognito', false)) {
    const mfa = optionalString(get, 'cognitoMfa') ?? 'required';
    if (mfa !== 'required' && mfa !== 'optional') throw new Error(`context "cognitoMfa" must be required or optional, got ${mfa}`);
    const featurePlan = optionalString(get, 'cognitoFeaturePlan') ?? 'essentials';
    if (featurePlan !== 'essentials' && featurePlan !== 'plus') throw new Error(`context "cognitoFeaturePlan" must be essentials or plus, got ${featurePlan}`);
    const callbackUrls = optionalString(get, 'cognitoCallbackUrls')?.split(',').map((u) => u.trim()).filter(Boolean);
    options.cognito = { domainPrefix: optionalString(get, 'cognitoDomainPrefix'), mfa, featurePlan, callbackUrls };
  }
  const userPoolId = optionalString(get, 'cognitoUserPoolId');
  const clientId = optionalString(get, 'cognitoClientId');
  if (userPoolId || clientId) {
    if (!userPoolId || !clientId) throw new Error('context "cognitoUserPoolId" and "cognitoClientId" go together');
    options.cognitoUserPool = { userPoolId, clientId };
  }
  const issuers = jsonContext(get, 'oidcIssuers');
  if (issuers !== undefined) {
    // The functions' own check, at synth time: a mistake fails here, not at the first cold start.
    oidcIssuers(issuers, 'context "oidcIssuers"');
    options.issuers = issuers as Record<string, unknown>[];
  }
  return options;
}

/** The issuer of an existing pool, from its id (`<region>_<suffix>`). */
export function cognitoIssuer(userPoolId: string, urlSuffix = 'amazonaws.com'): string {
  const match = POOL_ID.exec(userPoolId);
  if (!match) throw new Error(`context "cognitoUserPoolId": '${userPoolId}' is not a user pool id (<region>_<id>, e.g. eu-west-1_AbC123)`);
  return `https://cognito-idp.${match[1]}.${urlSuffix}/${userPoolId}`;
}

export interface IdentityProvidersProps extends IdentityProviderOptions {
  api: apigateway.RestApi;
}

export class IdentityProviders extends Construct {
  /** The user pool created with the stack (cognito=true). */
  readonly userPool?: cognito.UserPool;
  readonly userPoolClient?: cognito.UserPoolClient;
  readonly domain?: cognito.UserPoolDomain;
  /** The AUTH_OIDC_ISSUERS entries (the created pool's ids as CloudFormation references). */
  readonly issuers: Record<string, unknown>[] = [];

  constructor(scope: Construct, id: string, props: IdentityProvidersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const stageName = (props.api.deploymentStage.node.defaultChild as apigateway.CfnStage).stageName;
    const apiUrl = `https://${props.api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${stageName}`;

    if (props.cognito) {
      const { pool, client, domain } = this.createUserPool(props.cognito, apiUrl);
      this.userPool = pool;
      this.userPoolClient = client;
      this.domain = domain;
      this.issuers.push({
        issuer: `https://cognito-idp.${stack.region}.${stack.urlSuffix}/${pool.userPoolId}`,
        audience: client.userPoolClientId,
        clientId: client.userPoolClientId,
        name: 'Amazon Cognito',
        claims: COGNITO_CLAIMS,
        defaultTenant: DEFAULT_TENANT_ID,
      });
    }
    if (props.cognitoUserPool) {
      const { userPoolId, clientId } = props.cognitoUserPool;
      this.issuers.push({ issuer: cognitoIssuer(userPoolId), audience: clientId, clientId, name: 'Amazon Cognito', claims: COGNITO_CLAIMS, defaultTenant: DEFAULT_TENANT_ID });
    }
    this.issuers.push(...(props.issuers ?? []));
  }

  /** AUTH_OIDC_ISSUERS for the functions' environment, or undefined when no provider is configured. */
  environmentValue(): string | undefined {
    return this.issuers.length ? Stack.of(this).toJsonString(this.issuers) : undefined;
  }

  private createUserPool(options: NonNullable<IdentityProviderOptions['cognito']>, apiUrl: string) {
    const stack = Stack.of(this);
    const plus = options.featurePlan === 'plus';
    const pool = new cognito.UserPool(this, 'UserPool', {
      userPoolName: `${stack.stackName}-users`,
      // Administrators add people (the console, the CLI); nobody signs themself up into a tenant.
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true }, fullname: { required: false, mutable: true } },
      customAttributes: { tenant: new cognito.StringAttribute({ minLen: 1, maxLen: 64, mutable: true }) },
      passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true },
      mfa: options.mfa === 'optional' ? cognito.Mfa.OPTIONAL : cognito.Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      featurePlan: plus ? cognito.FeaturePlan.PLUS : cognito.FeaturePlan.ESSENTIALS,
      ...(plus ? { standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION } : {}),
    });
    new cognito.CfnUserPoolGroup(this, 'AdminGroup', {
      userPoolId: pool.userPoolId,
      groupName: 'admin',
      description: 'Administrators of their tenant in the Entity Record API',
    });
    // What the console's app client may read and write: never the tenant (an administrator sets it).
    const readable = new cognito.ClientAttributes().withStandardAttributes({ email: true, emailVerified: true, fullname: true }).withCustomAttributes('tenant');
    const writable = new cognito.ClientAttributes().withStandardAttributes({ fullname: true });
    const client = pool.addClient('Console', {
      userPoolClientName: 'console',
      generateSecret: false,
      authFlows: { userSrp: true },
      preventUserExistenceErrors: true,
      readAttributes: readable,
      writeAttributes: writable,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
        callbackUrls: [`${apiUrl}/api/v1/auth/oidc/callback`, ...(options.callbackUrls ?? [])],
        logoutUrls: [`${apiUrl}/dashboard`],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
    });
    const domainPrefix = options.domainPrefix ?? `${stack.stackName.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${stack.account}`;
    if (options.domainPrefix !== undefined && !DOMAIN_PREFIX.test(options.domainPrefix)) {
      throw new Error(`context "cognitoDomainPrefix": '${options.domainPrefix}' must be lower-case letters, digits and hyphens`);
    }
    const domain = pool.addDomain('Domain', { cognitoDomain: { domainPrefix } });
    return { pool, client, domain };
  }
}
