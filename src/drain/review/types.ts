// The review stage's shapes. They are defined in src/types.ts, because the
// repo config and the agents' invocation carry them and neither may import
// the drain; the stage names them from here.
export type { Finding, ReviewRole, Severity, VerdictCriterion, VerdictDoc } from '../../types.js';
export { SEVERITIES } from '../../repo/review-config.js';
