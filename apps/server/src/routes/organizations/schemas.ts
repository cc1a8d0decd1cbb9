import { z } from "@hono/zod-openapi";
import { Id, Organization, OrganizationCreate, OrganizationUpdate } from "@tern/protocol";

export const OrganizationSchema = Organization.meta({ id: "Organization" });
export const OrganizationCreateSchema = OrganizationCreate.meta({ id: "OrganizationCreate" });
export const OrganizationUpdateSchema = OrganizationUpdate.meta({ id: "OrganizationUpdate" });
/** A tunnel-range change that queued device jobs: the organization and those jobs. */
export const OrganizationUpdatedSchema = Organization.extend({ jobIds: z.array(Id) }).meta({ id: "OrganizationUpdated" });
