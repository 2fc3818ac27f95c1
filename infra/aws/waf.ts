/**
 * An optional AWS WAF web ACL on the API's stage (context waf=true): AWS's managed common rule
 * set and known-bad-inputs rule set, and a rate-based rule that blocks an IP address sending more
 * than `rateLimit` requests in 5 minutes. A blocked request gets the WAF_FILTERED gateway response
 * (403 FORBIDDEN in the error envelope, infra/aws/api.ts). Every rule publishes CloudWatch metrics
 * and samples; the access logs carry `$context.waf.status`.
 *
 * The common rule set's SizeRestrictions_BODY blocks any body over 8 KB, which bulk import, batch
 * and uploads through the API exceed by design; it only counts here (the API enforces its own body
 * limits and answers 413).
 */
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { booleanContext, numberContext } from './observability.js';

/** Requests per IP address per 5 minutes (WAF's evaluation window) before the rate rule blocks. */
export const DEFAULT_WAF_RATE_LIMIT = 2000;
/** WAF's own bounds for a rate-based rule's limit. */
export const WAF_RATE_LIMIT_BOUNDS = { min: 10, max: 2_000_000_000 } as const;
/** Rules of the common rule set that only count (see above). */
export const COUNTED_COMMON_RULES = ['SizeRestrictions_BODY'] as const;

export interface WafOptions {
  /** Create the web ACL and associate it with the stage (default false). */
  enabled?: boolean;
  /** Requests per IP per 5 minutes; default DEFAULT_WAF_RATE_LIMIT. */
  rateLimit?: number;
}

export function wafOptionsFromContext(get: (key: string) => unknown): WafOptions {
  const rateLimit = numberContext(get, 'wafRateLimit', WAF_RATE_LIMIT_BOUNDS.min, WAF_RATE_LIMIT_BOUNDS.max);
  if (rateLimit !== undefined && !Number.isInteger(rateLimit)) throw new Error(`context "wafRateLimit" must be an integer, got ${rateLimit}`);
  return { enabled: booleanContext(get, 'waf', false), rateLimit };
}

export interface ApiFirewallProps {
  api: apigateway.RestApi;
  rateLimit?: number;
}

function visibility(metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true };
}

function managedRuleGroup(name: string, priority: number, countedRules: readonly string[] = []): wafv2.CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    overrideAction: { none: {} },
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(countedRules.length ? { ruleActionOverrides: countedRules.map((rule) => ({ name: rule, actionToUse: { count: {} } })) } : {}),
      },
    },
    visibilityConfig: visibility(name),
  };
}

export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly rateLimit: number;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    const rateLimit = (this.rateLimit = props.rateLimit ?? DEFAULT_WAF_RATE_LIMIT);
    if (!Number.isInteger(rateLimit) || rateLimit < WAF_RATE_LIMIT_BOUNDS.min || rateLimit > WAF_RATE_LIMIT_BOUNDS.max) {
      throw new Error(`WAF rate limit must be an integer from ${WAF_RATE_LIMIT_BOUNDS.min} to ${WAF_RATE_LIMIT_BOUNDS.max}, got ${rateLimit}`);
    }
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      description: 'Entity Record API: AWS managed common and known-bad-inputs rules, and a per-IP rate limit',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('EntityRecordApi'),
      rules: [
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: rateLimit, evaluationWindowSec: 300 } },
          visibilityConfig: visibility('RateLimitPerIp'),
        },
        managedRuleGroup('AWSManagedRulesCommonRuleSet', 1, COUNTED_COMMON_RULES),
        managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 2),
      ],
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.api.deploymentStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage must exist before WAF can attach to it.
    association.node.addDependency(props.api.deploymentStage);
  }
}
