/**
 * WAF rules that refuse a request whose Content-Length is over what a function can receive
 * (shared/body-limits.ts), with 413 PAYLOAD_TOO_LARGE in the error envelope, before API
 * Gateway invokes Lambda. Without them, such a body reaches Lambda's invoke limit and the client
 * gets API Gateway's integration failure instead (infra/aws/api.ts).
 *
 * WAF compares no numbers: the rules match the header's digits with a regular expression that
 * accepts exactly the integers above the limit. A body sent without Content-Length (chunked) is
 * not seen by these rules.
 *
 * WAF's custom response headers are fixed text, so CORS cannot echo the request's Origin as the
 * gateway responses do: each origin of `allowedOrigins` gets its own rule answering with that
 * origin and credentials, and any other request gets `Access-Control-Allow-Origin: *`.
 */
import type * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { BINARY_MEDIA_TYPES, BODY_TOO_LARGE_MESSAGE, MAX_BINARY_BODY_BYTES, MAX_TEXT_BODY_BYTES } from '../../shared/body-limits.js';

/** The key of the 413 body among the web ACL's custom response bodies. */
export const PAYLOAD_TOO_LARGE_BODY_KEY = 'PayloadTooLarge';

/** WAF refuses longer regular expressions (its quota on characters per pattern). */
export const WAF_REGEX_MAX_LENGTH = 200;

function digitAbove(digit: number): string {
  return digit === 8 ? '9' : `[${digit + 1}-9]`;
}

function anyDigits(count: number): string {
  return count === 0 ? '' : count === 1 ? '\\d' : `\\d{${count}}`;
}

/**
 * A regular expression (PCRE as WAF runs it: no capturing groups) matching a decimal integer,
 * leading zeros and surrounding spaces allowed, exactly when it is greater than `limit`: any
 * longer number, or a number as long whose first differing digit is higher.
 */
export function greaterThanPattern(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`limit must be a non-negative integer, got ${limit}`);
  const digits = String(limit);
  const branches = [`[1-9]\\d{${digits.length},}`];
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    if (digit === 9) continue;
    branches.push(digits.slice(0, i) + digitAbove(digit) + anyDigits(digits.length - i - 1));
  }
  const pattern = `^\\s*0*(?:${branches.join('|')})\\s*$`;
  if (pattern.length > WAF_REGEX_MAX_LENGTH) throw new Error(`the pattern for ${limit} is longer than WAF accepts: ${pattern}`);
  return pattern;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The Content-Type of a binary media type, parameters allowed, compared in lower case. */
export const BINARY_TYPE_PATTERN = `^\\s*(?:${BINARY_MEDIA_TYPES.map(escapeRegex).join('|')})\\s*(?:;|$)`;

function header(name: string): wafv2.CfnWebACL.FieldToMatchProperty {
  // SingleHeader is passed to CloudFormation as written: `Name`, capitalised.
  return { singleHeader: { Name: name } };
}

function contentLengthOver(limit: number): wafv2.CfnWebACL.StatementProperty {
  return {
    regexMatchStatement: { regexString: greaterThanPattern(limit), fieldToMatch: header('content-length'), textTransformations: [{ priority: 0, type: 'NONE' }] },
  };
}

/** A declared body over the limit of its media type. */
export function bodyTooLargeStatement(): wafv2.CfnWebACL.StatementProperty {
  return {
    orStatement: {
      statements: [
        contentLengthOver(MAX_TEXT_BODY_BYTES),
        {
          andStatement: {
            statements: [
              { regexMatchStatement: { regexString: BINARY_TYPE_PATTERN, fieldToMatch: header('content-type'), textTransformations: [{ priority: 0, type: 'LOWERCASE' }] } },
              contentLengthOver(MAX_BINARY_BODY_BYTES),
            ],
          },
        },
      ],
    },
  };
}

export function payloadTooLargeBody(): wafv2.CfnWebACL.CustomResponseBodyProperty {
  return { contentType: 'APPLICATION_JSON', content: JSON.stringify({ success: false, error: BODY_TOO_LARGE_MESSAGE, code: 'PAYLOAD_TOO_LARGE' }) };
}

/** Metrics and sampled requests for a web ACL or one of its rules. */
export function visibility(metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true };
}

function refuse(name: string, priority: number, statement: wafv2.CfnWebACL.StatementProperty, headers: Record<string, string>): wafv2.CfnWebACL.RuleProperty {
  return {
    name,
    priority,
    action: {
      block: {
        customResponse: {
          responseCode: 413,
          customResponseBodyKey: PAYLOAD_TOO_LARGE_BODY_KEY,
          responseHeaders: Object.entries(headers).map(([headerName, value]) => ({ name: headerName, value })),
        },
      },
    },
    statement,
    visibilityConfig: visibility(name),
  };
}

/**
 * The rules, from `firstPriority` on: one per allowed origin (its Origin header, exactly), then
 * one for every other request. `*` among the origins needs no rule of its own.
 */
export function bodyLimitRules(allowedOrigins: readonly string[], firstPriority: number): wafv2.CfnWebACL.RuleProperty[] {
  const origins = [...new Set(allowedOrigins.filter((origin) => origin !== '*'))];
  const rules = origins.map((origin, i) =>
    refuse(
      `BodyTooLargeFromOrigin${i + 1}`,
      firstPriority + i,
      {
        andStatement: {
          statements: [
            { byteMatchStatement: { searchString: origin, fieldToMatch: header('origin'), positionalConstraint: 'EXACTLY', textTransformations: [{ priority: 0, type: 'NONE' }] } },
            bodyTooLargeStatement(),
          ],
        },
      },
      { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' },
    ),
  );
  rules.push(refuse('BodyTooLarge', firstPriority + origins.length, bodyTooLargeStatement(), { 'Access-Control-Allow-Origin': '*' }));
  return rules;
}
