import { AccessToken, AccessTokenCreate, AccessTokenCreated } from "@tern/protocol";

export const AccessTokenSchema = AccessToken.openapi("AccessToken");
export const AccessTokenCreateSchema = AccessTokenCreate.openapi("AccessTokenCreate");
export const AccessTokenCreatedSchema = AccessTokenCreated.openapi("AccessTokenCreated");
