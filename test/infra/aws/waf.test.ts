/** The optional WAF web ACL on the stage (infra/aws/waf.ts), synthesized offline without bundling. */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { greaterThanPattern, PAYLOAD_TOO_LARGE_BODY_KEY } from '../../../infra/aws/body-limit.js';
import { DEFAULT_WAF_RATE_LIMIT, wafOptionsFromContext } from '../../../infra/aws/waf.js';
import { BODY_TOO_LARGE_MESSAGE, MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES } from '../../../shared/body-limits.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

type Rule = { Name: string; Priority: number; Statement: Record<string, unknown>; Action?: Record<string, unknown> };

function webAcl(template: Template): { Rules: Rule[]; CustomResponseBodies?: Record<string, { ContentType: string; Content: string }> } {
  const acls = Object.values(template.findResources('AWS::WAFv2::WebACL'));
  expect(acls).toHaveLength(1);
  return acls[0].Properties;
}

/** Every regular expression a statement tests, with the header it reads. */
function regexes(statement: unknown): { header: string; regex: string; transformation: string }[] {
  const found: { header: string; regex: string; transformation: string }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const match = (node as { RegexMatchStatement?: { RegexString: string; FieldToMatch: { SingleHeader: { Name: string } }; TextTransformations: { Type: string }[] } })
      .RegexMatchStatement;
    if (match) found.push({ header: match.FieldToMatch.SingleHeader.Name, regex: match.RegexString, transformation: match.TextTransformations[0].Type });
    Object.values(node).forEach(walk);
  };
  walk(statement);
  return found;
}

function synth(props: EntityRecordApiStackProps = {}): { stack: EntityRecordApiStack; template: Template } {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new EntityRecordApiStack(app, 'Waf', { code: lambda.Code.fromInline('export const handler = async () => ({});'), ...props });
  return { stack, template: Template.fromStack(stack) };
}

describe('WAF web ACL', { timeout: 180_000 }, () => {
  it('is off by default', () => {
    const { template } = synth();

    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });

  it('when asked, blocks an IP over the rate limit and applies the managed common and known-bad-inputs rules, on the stage', () => {
    const { stack, template } = synth({ waf: { enabled: true, rateLimit: 500 } });

    const acls = Object.values(template.findResources('AWS::WAFv2::WebACL'));
    expect(acls).toHaveLength(1);
    const acl = acls[0].Properties;
    expect(acl.Scope).toBe('REGIONAL');
    expect(acl.DefaultAction).toEqual({ Allow: {} });
    const rules = Object.fromEntries(acl.Rules.map((r: { Name: string }) => [r.Name, r]));
    expect(acl.Rules.map((r: Rule) => r.Name)).toEqual(['RateLimitPerIp', 'BodyTooLarge', 'AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet']);
    expect(acl.Rules.map((r: Rule) => r.Priority)).toEqual([0, 1, 2, 3]);
    expect(rules.RateLimitPerIp).toMatchObject({
      Action: { Block: {} },
      Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 500, EvaluationWindowSec: 300 } },
    });
    expect(rules.AWSManagedRulesCommonRuleSet.Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    // Bulk import, batch and uploads send bodies over 8 KB: that one rule only counts.
    expect(rules.AWSManagedRulesCommonRuleSet.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toEqual([{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }]);
    expect(rules.AWSManagedRulesCommonRuleSet.OverrideAction).toEqual({ None: {} });
    expect(rules.AWSManagedRulesKnownBadInputsRuleSet.Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesKnownBadInputsRuleSet' });
    for (const rule of acl.Rules) expect(rule.VisibilityConfig, rule.Name).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });

    const [association] = Object.values(template.findResources('AWS::WAFv2::WebACLAssociation'));
    const aclId = stack.getLogicalId(stack.firewall!.webAcl);
    expect(association.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const stageArn = JSON.stringify(association.Properties.ResourceArn);
    expect(stageArn).toContain(`"Ref":"${stack.getLogicalId(stack.api.node.defaultChild as never)}"`);
    expect(stageArn).toContain(`/stages/`);
    expect(stageArn).toContain(`"Ref":"${stack.getLogicalId(stack.api.deploymentStage.node.defaultChild as never)}"`);
  });

  it('takes its switch and rate limit from context, within WAF bounds', () => {
    const context = (values: Record<string, unknown>) => (key: string) => values[key];

    expect(wafOptionsFromContext(context({}))).toEqual({ enabled: false, rateLimit: undefined, bodyLimit: false });
    expect(wafOptionsFromContext(context({ waf: 'true', wafRateLimit: '300' }))).toEqual({ enabled: true, rateLimit: 300, bodyLimit: true });
    expect(wafOptionsFromContext(context({ waf: 'true', wafBodyLimit: 'false' }))).toMatchObject({ enabled: true, bodyLimit: false });
    expect(wafOptionsFromContext(context({ wafBodyLimit: 'true' }))).toMatchObject({ enabled: false, bodyLimit: true });
    expect(() => wafOptionsFromContext(context({ wafBodyLimit: 'yes' }))).toThrow(/"wafBodyLimit" must be true or false/);
    expect(() => wafOptionsFromContext(context({ wafRateLimit: '5' }))).toThrow(/wafRateLimit/);
    expect(() => wafOptionsFromContext(context({ wafRateLimit: '100.5' }))).toThrow(/integer/);
    expect(() => wafOptionsFromContext(context({ waf: 'on' }))).toThrow(/"waf" must be true or false/);
    expect(DEFAULT_WAF_RATE_LIMIT).toBe(2000);
  });

  describe('body-limit rules', () => {
    it('refuse a declared body too large for Lambda with 413 and the error envelope, in JSON, before any managed rule', () => {
      const acl = webAcl(synth({ waf: { enabled: true } }).template);
      const rule = acl.Rules.find((r) => r.Name === 'BodyTooLarge')!;

      expect(rule.Action).toEqual({
        Block: {
          CustomResponse: {
            ResponseCode: 413,
            CustomResponseBodyKey: PAYLOAD_TOO_LARGE_BODY_KEY,
            ResponseHeaders: [{ Name: 'Access-Control-Allow-Origin', Value: '*' }],
          },
        },
      });
      const body = acl.CustomResponseBodies![PAYLOAD_TOO_LARGE_BODY_KEY];
      expect(body.ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(body.Content)).toEqual({ success: false, error: BODY_TOO_LARGE_MESSAGE, code: 'PAYLOAD_TOO_LARGE' });
      expect(JSON.parse(body.Content).error).toContain('POST /api/v1/upload/presign');
      expect(rule.Priority).toBeLessThan(acl.Rules.find((r) => r.Name === 'AWSManagedRulesCommonRuleSet')!.Priority);
    });

    it('match Content-Length over 6,225,920, or over 4,669,440 with a binary media type', () => {
      const acl = webAcl(synth({ waf: { enabled: true } }).template);
      const statement = acl.Rules.find((r) => r.Name === 'BodyTooLarge')!.Statement as {
        OrStatement: { Statements: [Record<string, unknown>, { AndStatement: { Statements: Record<string, unknown>[] } }] };
      };
      const [anyType, binary] = statement.OrStatement.Statements;

      expect(regexes(anyType)).toEqual([{ header: 'content-length', regex: greaterThanPattern(MAX_TEXT_BODY_BYTES), transformation: 'NONE' }]);
      const [type, length] = regexes(binary.AndStatement.Statements);
      expect(type.header).toBe('content-type');
      expect(type.transformation).toBe('LOWERCASE');
      expect(new RegExp(type.regex).test('multipart/form-data; boundary=x')).toBe(true);
      expect(new RegExp(type.regex).test('application/json')).toBe(false);
      expect(length).toEqual({ header: 'content-length', regex: greaterThanPattern(MAX_BINARY_BODY_BYTES), transformation: 'NONE' });
      // The synthesized patterns, as WAF will run them, on the values either side of each limit.
      const over = (regex: string, n: number) => new RegExp(regex).test(String(n));
      expect([over(length.regex, 4_669_440), over(length.regex, 4_669_441)]).toEqual([false, true]);
      expect([over(regexes(anyType)[0].regex, 6_225_920), over(regexes(anyType)[0].regex, 6_225_921)]).toEqual([false, true]);
    });

    it('answer an allowed origin with credentialed CORS from a rule of its own', () => {
      const acl = webAcl(synth({ waf: { enabled: true }, environment: { ALLOWED_ORIGINS: 'https://app.example.com, *' } }).template);
      const rule = acl.Rules.find((r) => r.Name === 'BodyTooLargeFromOrigin1')!;
      const statements = (rule.Statement as { AndStatement: { Statements: Record<string, unknown>[] } }).AndStatement.Statements;

      expect(statements[0]).toEqual({
        ByteMatchStatement: {
          SearchString: 'https://app.example.com',
          FieldToMatch: { SingleHeader: { Name: 'origin' } },
          PositionalConstraint: 'EXACTLY',
          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
        },
      });
      expect(statements[1]).toEqual(acl.Rules.find((r) => r.Name === 'BodyTooLarge')!.Statement);
      expect((rule.Action as { Block: { CustomResponse: { ResponseHeaders: unknown } } }).Block.CustomResponse.ResponseHeaders).toEqual([
        { Name: 'Access-Control-Allow-Origin', Value: 'https://app.example.com' },
        { Name: 'Access-Control-Allow-Credentials', Value: 'true' },
        { Name: 'Vary', Value: 'Origin' },
      ]);
      expect(acl.Rules.map((r) => r.Name).slice(0, 3)).toEqual(['RateLimitPerIp', 'BodyTooLargeFromOrigin1', 'BodyTooLarge']);
    });

    it('can make a web ACL of their own, without the managed rules and the rate rule', () => {
      const { stack, template } = synth({ waf: { bodyLimit: true } });
      const acl = webAcl(template);

      expect(acl.Rules.map((r) => [r.Name, r.Priority])).toEqual([['BodyTooLarge', 0]]);
      template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
      expect(stack.firewall).toBeDefined();
    });

    it('can be left out of the web ACL', () => {
      const acl = webAcl(synth({ waf: { enabled: true, bodyLimit: false } }).template);

      expect(acl.Rules.map((r) => r.Name)).toEqual(['RateLimitPerIp', 'AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet']);
      expect(acl.CustomResponseBodies).toBeUndefined();
    });
  });
});
