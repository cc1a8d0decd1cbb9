import { Organization, OrganizationCreate, OrganizationUpdate } from "@tern/protocol";

export const OrganizationSchema = Organization.meta({ id: "Organization" });
export const OrganizationCreateSchema = OrganizationCreate.meta({ id: "OrganizationCreate" });
export const OrganizationUpdateSchema = OrganizationUpdate.meta({ id: "OrganizationUpdate" });
