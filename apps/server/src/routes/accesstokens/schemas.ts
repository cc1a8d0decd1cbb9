import { AccessToken, AccessTokenCreate, AccessTokenCreated } from "@tern/protocol";

export const AccessTokenSchema = AccessToken.meta({ id: "AccessToken" });
export const AccessTokenCreateSchema = AccessTokenCreate.meta({ id: "AccessTokenCreate" });
export const AccessTokenCreatedSchema = AccessTokenCreated.meta({ id: "AccessTokenCreated" });
