import {
  LoginRequest,
  PasswordChange,
  PasswordResetConfirm,
  PasswordResetRequest,
  RefreshRequest,
  Session,
  TokenPair,
} from "@tern/protocol";

export const LoginRequestSchema = LoginRequest.meta({ id: "LoginRequest" });
export const RefreshRequestSchema = RefreshRequest.meta({ id: "RefreshRequest" });
export const TokenPairSchema = TokenPair.meta({ id: "TokenPair" });
export const PasswordChangeSchema = PasswordChange.meta({ id: "PasswordChange" });
export const PasswordResetRequestSchema = PasswordResetRequest.meta({ id: "PasswordResetRequest" });
export const PasswordResetConfirmSchema = PasswordResetConfirm.meta({ id: "PasswordResetConfirm" });
export const SessionSchema = Session.meta({ id: "Session" });
