import type { DetailedError } from '@cedar-policy/cedar-wasm/nodejs';
import { cedarEngine } from './cedar-engine.js';
import { CEDAR_SCHEMA } from './cedar-schema.js';

/** One of Cedar's errors in a sentence: its message, its help, and where in the text it is. */
export function describeCedarError(error: DetailedError): string {
  const message = error.message.replace(/^for policy `[^`]*`, /, '').replace(/ with id `[^`]*`/, '');
  const at = error.sourceLocations?.[0];
  return `${message}${error.help ? ` (${error.help})` : ''}${at ? ` at character ${at.start}` : ''}`;
}

/**
 * What is wrong with a policy text, in Cedar's own words, or null when it is one static policy that Cedar's
 * validator accepts against the published schema (strict mode: unknown attributes, actions or types, and
 * optional attributes read without `has`, are errors).
 */
export function cedarPolicyProblem(text: string): string | null {
  const cedar = cedarEngine();
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === 'failure') return describeCedarError(parts.errors[0]!);
  if (parts.policy_templates.length > 0) return 'must be a static policy, not a template (no ?principal or ?resource)';
  if (parts.policies.length !== 1) return `must hold exactly one policy; it holds ${parts.policies.length}`;
  const checked = cedar.validate({
    schema: CEDAR_SCHEMA,
    policies: { staticPolicies: { policy: text } },
    validationSettings: { mode: 'strict' },
  });
  if (checked.type === 'failure') return describeCedarError(checked.errors[0]!);
  const first = checked.validationErrors[0];
  return first ? describeCedarError(first.error) : null;
}

/** The published schema as JSON (Cedar's own conversion of the text). */
export function cedarSchemaJson(): Record<string, unknown> {
  const json = cedarEngine().schemaToJson(CEDAR_SCHEMA);
  if (json.type === 'failure')
    throw new Error(`the Cedar schema does not parse: ${describeCedarError(json.errors[0]!)}`);
  return json.json;
}
