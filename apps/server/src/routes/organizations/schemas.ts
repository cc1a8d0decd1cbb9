import { Organization, OrganizationCreate, OrganizationUpdate } from "@tern/protocol";

export const OrganizationSchema = Organization.openapi("Organization");
export const OrganizationCreateSchema = OrganizationCreate.openapi("OrganizationCreate");
export const OrganizationUpdateSchema = OrganizationUpdate.openapi("OrganizationUpdate");
