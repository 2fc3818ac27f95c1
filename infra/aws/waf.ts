/**
 * An optional AWS WAF web ACL on the API's stage (context waf=true): AWS's managed common rule
 * set and known-bad-inputs rule set, and a rate-based rule that blocks an IP address sending more
 * than `rateLimit` requests in 5 minutes. A blocked request gets the WAF_FILTERED gateway response
 * (403 FORBIDDEN in the error envelope, infra/aws/api.ts). Every rule publishes CloudWatch metrics
 * and samples; the access logs carry `$context.waf.status`.
 *
 * The body-limit rules (infra/aws/body-limit.ts: 413 for a declared body too large for Lambda)
 * come with it by default (context wafBodyLimit), and can be had alone: a web ACL holding only
 * them, without the managed rules and the rate rule (waf=false, wafBodyLimit=true).
 *
 * The common rule set's SizeRestrictions_BODY blocks any body over 8 KB, which bulk import, batch
 * and uploads through the API exceed by design; it only counts here (the API enforces its own body
 * limits and answers 413).
 */
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { bodyLimitRules, PAYLOAD_TOO_LARGE_BODY_KEY, payloadTooLargeBody, visibility } from './body-limit.js';
import { booleanContext, numberContext } from './observability.js';

/** Requests per IP address per 5 minutes (WAF's evaluation window) before the rate rule blocks. */
export const DEFAULT_WAF_RATE_LIMIT = 2000;
/** WAF's own bounds for a rate-based rule's limit. */
export const WAF_RATE_LIMIT_BOUNDS = { min: 10, max: 2_000_000_000 } as const;
/** Rules of the common rule set that only count (see above). */
export const COUNTED_COMMON_RULES = ['SizeRestrictions_BODY'] as const;

export interface WafOptions {
  /** The managed rules and the rate rule in a web ACL on the stage (default false). */
  enabled?: boolean;
  /** Requests per IP per 5 minutes; default DEFAULT_WAF_RATE_LIMIT. */
  rateLimit?: number;
  /** The body-limit rules (default: as `enabled`); alone, they make a web ACL of their own. */
  bodyLimit?: boolean;
}

export function wafOptionsFromContext(get: (key: string) => unknown): WafOptions {
  const rateLimit = numberContext(get, 'wafRateLimit', WAF_RATE_LIMIT_BOUNDS.min, WAF_RATE_LIMIT_BOUNDS.max);
  if (rateLimit !== undefined && !Number.isInteger(rateLimit)) throw new Error(`context "wafRateLimit" must be an integer, got ${rateLimit}`);
  const enabled = booleanContext(get, 'waf', false);
  return { enabled, rateLimit, bodyLimit: booleanContext(get, 'wafBodyLimit', enabled) };
}

export interface ApiFirewallProps {
  api: apigateway.RestApi;
  /** The managed rule groups and the per-IP rate rule (default true). */
  managedRules?: boolean;
  rateLimit?: number;
  /** The body-limit rules, answering CORS for these origins (ALLOWED_ORIGINS); absent: no such rules. */
  bodyLimit?: { allowedOrigins: readonly string[] };
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
    const managed = props.managedRules ?? true;
    if (!managed && !props.bodyLimit) throw new Error('a web ACL needs the managed rules, the body-limit rules or both');
    const rateLimit = (this.rateLimit = props.rateLimit ?? DEFAULT_WAF_RATE_LIMIT);
    if (!Number.isInteger(rateLimit) || rateLimit < WAF_RATE_LIMIT_BOUNDS.min || rateLimit > WAF_RATE_LIMIT_BOUNDS.max) {
      throw new Error(`WAF rate limit must be an integer from ${WAF_RATE_LIMIT_BOUNDS.min} to ${WAF_RATE_LIMIT_BOUNDS.max}, got ${rateLimit}`);
    }
    // Order: a rate-limited IP stays blocked; a body too large is answered 413 before any
    // managed rule looks at it.
    const rules: wafv2.CfnWebACL.RuleProperty[] = [];
    if (managed) {
      rules.push({
        name: 'RateLimitPerIp',
        priority: 0,
        action: { block: {} },
        statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: rateLimit, evaluationWindowSec: 300 } },
        visibilityConfig: visibility('RateLimitPerIp'),
      });
    }
    if (props.bodyLimit) rules.push(...bodyLimitRules(props.bodyLimit.allowedOrigins, rules.length));
    if (managed) {
      rules.push(managedRuleGroup('AWSManagedRulesCommonRuleSet', rules.length, COUNTED_COMMON_RULES));
      rules.push(managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', rules.length));
    }
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      description: managed
        ? `Entity Record API: AWS managed common and known-bad-inputs rules, and a per-IP rate limit${props.bodyLimit ? ', 413 for bodies too large for Lambda' : ''}`
        : 'Entity Record API: 413 for bodies too large for Lambda',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('EntityRecordApi'),
      ...(props.bodyLimit ? { customResponseBodies: { [PAYLOAD_TOO_LARGE_BODY_KEY]: payloadTooLargeBody() } } : {}),
      rules,
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.api.deploymentStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage must exist before WAF can attach to it.
    association.node.addDependency(props.api.deploymentStage);
  }
}
