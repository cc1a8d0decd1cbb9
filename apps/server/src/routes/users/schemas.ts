import { LoginRequest, RefreshRequest, TokenPair } from "@tern/protocol";

export const LoginRequestSchema = LoginRequest.openapi("LoginRequest");
export const RefreshRequestSchema = RefreshRequest.openapi("RefreshRequest");
export const TokenPairSchema = TokenPair.openapi("TokenPair");
