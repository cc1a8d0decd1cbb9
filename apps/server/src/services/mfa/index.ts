export { auditUserEvent } from "./audit.ts";
export { completeSecondFactor, startSecondFactor } from "./challenge.ts";
export { confirmMfa, disableMfa, enrolMfa, getMfaStatus, NO_PASSWORD, regenerateRecoveryCodes } from "./enrolment.ts";
export { assertMfaPolicy, getOrgSecurity, updateOrgSecurity } from "./policy.ts";
