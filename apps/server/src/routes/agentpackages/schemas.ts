import { AgentPackage, AgentSigningKey, AgentSigningKeyCreate } from "@tern/protocol";
import type { RouteAuthorization } from "../../auth/authorize.ts";

export const AgentPackageSchema = AgentPackage.meta({ id: "AgentPackage" });
export const AgentSigningKeySchema = AgentSigningKey.meta({ id: "AgentSigningKey" });
export const AgentSigningKeyCreateSchema = AgentSigningKeyCreate.meta({ id: "AgentSigningKeyCreate" });

/**
 * Packages and signing keys belong to the account (the operator's, shared by its organizations): the caller's
 * role on the account counts (`?org` names which account, through one of its organizations). Account managers
 * may list; only account owners upload, register keys and delete.
 */
export const ACCOUNT_AUTH: RouteAuthorization = { resource: "accounts", scope: "account" };
