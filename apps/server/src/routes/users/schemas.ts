import { LoginRequest, RefreshRequest, TokenPair } from "@tern/protocol";

export const LoginRequestSchema = LoginRequest.meta({ id: "LoginRequest" });
export const RefreshRequestSchema = RefreshRequest.meta({ id: "RefreshRequest" });
export const TokenPairSchema = TokenPair.meta({ id: "TokenPair" });
