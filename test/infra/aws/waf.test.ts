/** The optional WAF web ACL on the stage (infra/aws/waf.ts), synthesized offline without bundling. */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/aws/functions.js';
import { EntityRecordApiStack, type EntityRecordApiStackProps } from '../../../infra/aws/stack.js';
import { DEFAULT_WAF_RATE_LIMIT, wafOptionsFromContext } from '../../../infra/aws/waf.js';

const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

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

    expect(wafOptionsFromContext(context({}))).toEqual({ enabled: false, rateLimit: undefined });
    expect(wafOptionsFromContext(context({ waf: 'true', wafRateLimit: '300' }))).toEqual({ enabled: true, rateLimit: 300 });
    expect(() => wafOptionsFromContext(context({ wafRateLimit: '5' }))).toThrow(/wafRateLimit/);
    expect(() => wafOptionsFromContext(context({ wafRateLimit: '100.5' }))).toThrow(/integer/);
    expect(() => wafOptionsFromContext(context({ waf: 'on' }))).toThrow(/"waf" must be true or false/);
    expect(DEFAULT_WAF_RATE_LIMIT).toBe(2000);
  });
});
