import {
  LoginResult,
  MfaChallenge,
  MfaConfirmRequest,
  MfaEnrolment,
  MfaEnrolRequest,
  MfaLoginRequest,
  MfaProofRequest,
  MfaRecoveryCodes,
  MfaStatus,
  OrganizationSecurity,
} from "@tern/protocol";

export const MfaChallengeSchema = MfaChallenge.meta({ id: "MfaChallenge" });
export const LoginResultSchema = LoginResult.meta({ id: "LoginResult" });
export const MfaLoginRequestSchema = MfaLoginRequest.meta({ id: "MfaLoginRequest" });
export const MfaStatusSchema = MfaStatus.meta({ id: "MfaStatus" });
export const MfaEnrolRequestSchema = MfaEnrolRequest.meta({ id: "MfaEnrolRequest" });
export const MfaEnrolmentSchema = MfaEnrolment.meta({ id: "MfaEnrolment" });
export const MfaConfirmRequestSchema = MfaConfirmRequest.meta({ id: "MfaConfirmRequest" });
export const MfaProofRequestSchema = MfaProofRequest.meta({ id: "MfaProofRequest" });
export const MfaRecoveryCodesSchema = MfaRecoveryCodes.meta({ id: "MfaRecoveryCodes" });
export const OrganizationSecuritySchema = OrganizationSecurity.meta({ id: "OrganizationSecurity" });
