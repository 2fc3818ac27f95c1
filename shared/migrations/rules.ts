/**
 * The rules a stored value must meet (required, maxLength, enum values, min/max, pattern), checked
 * on a whole record: the migration lists the records a tightened rule leaves invalid, and an
 * update of such a record must make it valid. Pure: no I/O.
 */
import type { FieldRules } from './layout.js';

/** Field → problem, for each rule `data` breaks (none: valid). */
export function ruleViolations(rules: Record<string, FieldRules>, defaults: Record<string, unknown>, data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const value = data[name];
    if (value === undefined || value === null) {
      if (rule.required && defaults[name] === undefined) out[name] = 'is required';
      continue;
    }
    if (rule.type === 'string' && typeof value === 'string') {
      if (rule.maxLength !== undefined && value.length > rule.maxLength) out[name] = `must be at most ${rule.maxLength} characters`;
      else if (rule.min !== undefined && value.length < rule.min) out[name] = `must be at least ${rule.min} characters`;
      else if (rule.max !== undefined && value.length > rule.max) out[name] = `must be at most ${rule.max} characters`;
      else if (rule.pattern !== undefined && !new RegExp(rule.pattern, 'u').test(value)) out[name] = `must match ${rule.pattern}`;
    } else if (rule.type === 'enum' && rule.values && !rule.values.includes(String(value))) {
      out[name] = `must be one of ${rule.values.join(', ')}`;
    } else if (rule.type === 'number' && typeof value === 'number') {
      if (rule.min !== undefined && value < rule.min) out[name] = `must be at least ${rule.min}`;
      else if (rule.max !== undefined && value > rule.max) out[name] = `must be at most ${rule.max}`;
    }
  }
  return out;
}
