import { RegistrationToken, RegistrationTokenCreate, RegistrationTokenCreated } from "@tern/protocol";

export const RegistrationTokenSchema = RegistrationToken.meta({ id: "RegistrationToken" });
export const RegistrationTokenCreateSchema = RegistrationTokenCreate.meta({ id: "RegistrationTokenCreate" });
export const RegistrationTokenCreatedSchema = RegistrationTokenCreated.meta({ id: "RegistrationTokenCreated" });
