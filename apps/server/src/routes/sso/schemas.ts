import { SsoCallbackQuery, SsoProvider, SsoProviderCreate, SsoProviderUpdate } from "@tern/protocol";

export const SsoProviderSchema = SsoProvider.meta({ id: "SsoProvider" });
export const SsoProviderCreateSchema = SsoProviderCreate.meta({ id: "SsoProviderCreate" });
export const SsoProviderUpdateSchema = SsoProviderUpdate.meta({ id: "SsoProviderUpdate" });
export const SsoCallbackQuerySchema = SsoCallbackQuery;
