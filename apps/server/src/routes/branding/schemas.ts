import { Branding, BrandingUpdate } from "@tern/protocol";

export const BrandingSchema = Branding.meta({ id: "Branding" });
export const BrandingUpdateSchema = BrandingUpdate.meta({ id: "BrandingUpdate" });
