import { RegisterRequest, RegisterResponse } from "@tern/protocol";

export const RegisterRequestSchema = RegisterRequest.meta({ id: "RegisterRequest" });
export const RegisterResponseSchema = RegisterResponse.meta({ id: "RegisterResponse" });
