/**
 * The identity providers of the stack (infra/aws/identity-providers.ts), synthesized offline
 * without bundling: a Cognito user pool created with it, an existing pool, any OIDC issuer, and
 * what the functions are given (AUTH_OIDC_ISSUERS).
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { cognitoIssuer, identityProvidersFromContext } from '../../../infra/aws/identity-providers.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

function synth(props: EntityRecordApiStackProps = {}): { stack: EntityRecordApiStack; template: Template } {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Idp', { code: lambda.Code.fromInline('export const handler = async () => ({});'), ...props });
  return { stack, template: Template.fromStack(stack) };
}

/** The AUTH_OIDC_ISSUERS of every family function as synthesized (a string, or an Fn::Join around references). */
function issuersOfFunctions(template: Template): unknown[] {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')).filter((f) => /^Entity Record API: \w+ operations$/.test(f.Properties.Description));
  expect(functions.length).toBeGreaterThan(10);
  return functions.map((f) => f.Properties.Environment.Variables.AUTH_OIDC_ISSUERS);
}

const get = (context: Record<string, unknown>) => (key: string) => context[key];

describe('identity providers', { timeout: 180_000 }, () => {
  it('are none by default: no user pool, no AUTH_OIDC_ISSUERS', () => {
    const { template } = synth();

    template.resourceCountIs('AWS::Cognito::UserPool', 0);
    expect(issuersOfFunctions(template).every((v) => v === undefined)).toBe(true);
  });

  it('with cognito=true: a user pool without self sign-up, strong passwords and TOTP required, an admin group, a tenant attribute', () => {
    const { template } = synth({ identityProviders: identityProvidersFromContext(get({ cognito: 'true', cognitoDomainPrefix: 'acme-records' })) });

    template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: 'ON',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireUppercase: true, RequireLowercase: true, RequireNumbers: true, RequireSymbols: true }) },
      Schema: Match.arrayWith([Match.objectLike({ Name: 'tenant', AttributeDataType: 'String', Mutable: true })]),
      UsernameAttributes: ['email'],
    });
    template.hasResourceProperties('AWS::Cognito::UserPoolGroup', { GroupName: 'admin' });
    template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'acme-records' });
  });

  it('give the console an app client: code flow without a secret, back to the API, the tenant readable but not writable', () => {
    const { stack, template } = synth({ identityProviders: { cognito: { callbackUrls: ['https://api.example.com/api/v1/auth/oidc/callback'] } } });

    const clients = Object.values(template.findResources('AWS::Cognito::UserPoolClient'));
    expect(clients).toHaveLength(1);
    const client = clients[0].Properties;
    expect(client.GenerateSecret).toBe(false);
    expect(client.AllowedOAuthFlows).toEqual(['code']);
    expect(client.AllowedOAuthScopes.sort()).toEqual(['email', 'openid', 'profile']);
    expect(client.ReadAttributes).toContain('custom:tenant');
    expect(client.WriteAttributes).not.toContain('custom:tenant');
    expect(JSON.stringify(client.CallbackURLs)).toContain('/prod/api/v1/auth/oidc/callback');
    expect(client.CallbackURLs).toContain('https://api.example.com/api/v1/auth/oidc/callback');
    expect(JSON.stringify(client.LogoutURLs)).toContain('/prod/dashboard');
    // The URLs name the REST API, not its stage (whose deployment needs the functions, which need
    // the client: a cycle CloudFormation would refuse).
    const restApi = stack.getLogicalId(stack.api.node.defaultChild as never);
    const stage = stack.getLogicalId(stack.api.deploymentStage.node.defaultChild as never);
    expect(client.CallbackURLs[0]['Fn::Join'][1]).toContainEqual({ Ref: restApi });
    expect(JSON.stringify(client)).not.toContain(stage);
  });

  it('with cognito=true: every family is given the pool as an issuer, its client as audience and console client', () => {
    const { template } = synth({ identityProviders: { cognito: {} } });

    const values = issuersOfFunctions(template);
    expect(new Set(values.map((v) => JSON.stringify(v))).size).toBe(1);
    const text = JSON.stringify(values[0]);
    // The pool's ids are CloudFormation references, resolved at deploy time (synth stays offline).
    for (const piece of ['Fn::Join', 'cognito-idp.', 'custom:tenant', 'cognito:groups', 'ten_default', 'Ref']) expect(text).toContain(piece);
  });

  it('take cognitoMfa=optional and cognitoFeaturePlan=plus', () => {
    const { template } = synth({ identityProviders: identityProvidersFromContext(get({ cognito: true, cognitoMfa: 'optional', cognitoFeaturePlan: 'plus' })) });

    template.hasResourceProperties('AWS::Cognito::UserPool', { MfaConfiguration: 'OPTIONAL', UserPoolTier: 'PLUS' });
  });

  it('name an existing pool by its id, its issuer derived offline', () => {
    const { template } = synth({ identityProviders: identityProvidersFromContext(get({ cognitoUserPoolId: 'eu-west-1_AbC123', cognitoClientId: 'client123' })) });

    template.resourceCountIs('AWS::Cognito::UserPool', 0);
    const [issuers] = issuersOfFunctions(template) as string[];
    expect(JSON.parse(issuers)).toEqual([
      expect.objectContaining({ issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123', audience: 'client123', clientId: 'client123' }),
    ]);
  });

  it('pass any OIDC issuer through, after checking it', () => {
    const okta = { issuer: 'https://acme.okta.com/oauth2/default', audience: 'api://records', clientId: 'okta-client', name: 'Okta' };
    const { template } = synth({ identityProviders: identityProvidersFromContext(get({ oidcIssuers: JSON.stringify([okta]) })) });

    expect(JSON.parse((issuersOfFunctions(template) as string[])[0])).toEqual([okta]);
    expect(() => identityProvidersFromContext(get({ oidcIssuers: '[{"issuer":"https://x.example.com"}]' }))).toThrow(/audience/);
  });

  it('refuse what cannot be meant', () => {
    expect(() => identityProvidersFromContext(get({ cognitoUserPoolId: 'eu-west-1_AbC123' }))).toThrow(/go together/);
    expect(() => cognitoIssuer('not-a-pool')).toThrow(/user pool id/);
    expect(() => identityProvidersFromContext(get({ cognito: true, cognitoMfa: 'sometimes' }))).toThrow(/cognitoMfa/);
    expect(() => synth({ identityProviders: { cognito: { domainPrefix: 'Bad_Prefix' } } })).toThrow(/cognitoDomainPrefix/);
    expect(() => synth({ environment: { AUTH_OIDC_ISSUERS: '[]' }, identityProviders: { cognito: {} } })).toThrow(/use one of them/);
  });
});
