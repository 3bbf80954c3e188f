/**
 * The gateway's contract (docs/gateway-api.md): operation types, types, rules, envelope and
 * responses. Imports nothing of ferry but `errors.ts`. A `spec: <section>` marker in this
 * folder names a section of the gateway's API documentation; docs/gateway-api.md sums up
 * each one in ferry's terms (Endpoints, Request envelope, Operations, Responses, Errors,
 * Status callbacks, Limits, and the assumptions where that documentation is silent).
 */
export * from './envelope.ts';
export { type FieldRules, type RuleName, ruleNames } from './field-rules.ts';
export * from './item-errors.ts';
export * from './limits.ts';
export * from './operation-types.ts';
export { defineSpec, type OperationSpec, operationSpecs } from './operations.ts';
export * from './response.ts';
export { statusCallbackRules } from './status-callback.ts';
export type * from './types.ts';
export {
  bracketPath,
  type ValidationResult,
  validateEnvelopeShape,
  validateOperation,
  validateStatusCallback,
} from './validate.ts';
