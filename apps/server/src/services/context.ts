/**
 * The context every service function takes first: `verb(ctx, input)`. REST
 * handlers build it from the request; the device gateway builds it for a
 * device. `db` is the root handle or a transaction.
 */
import { randomUUID } from "node:crypto";
import { type Permissions, ROLE_PERMISSIONS, type Role } from "@tern/protocol";
import type { Logger } from "pino";
import { type Access, type Actor, type OrgRef, SYSTEM_ACTOR } from "../auth/access.ts";
import type { ServerConfig } from "../config.ts";
import type { Db } from "../db/schema.ts";
import type { AppDeps } from "../deps.ts";
import type { Keyring } from "../secrets/keyring.ts";

export interface ServiceCtx {
  db: Db;
  org: OrgRef;
  actor: Actor;
  /** The caller's rights in `org` (services that hand out rights check against these). */
  role: Role;
  permissions: Permissions;
  accountRole: Role | null;
  config: ServerConfig;
  keyring: Keyring;
  logger: Logger;
  /**
   * The group of the jobs a request queues (`jobs.group_id`, listed by `GET /api/jobs?group=<id>`): one per
   * request, written by the INSERT that queues the jobs. None for the server's own work.
   */
  jobGroup?: string;
}

export function serviceCtx(deps: AppDeps, access: Access, logger: Logger = deps.logger, jobGroup?: string): ServiceCtx {
  return {
    db: deps.db,
    org: access.org,
    actor: access.actor,
    role: access.role,
    permissions: access.permissions,
    accountRole: access.accountRole,
    config: deps.config,
    keyring: deps.keyring,
    logger,
    jobGroup,
  };
}

/**
 * A context for work the server does by itself or for a device (job engine,
 * device gateway): full rights in `org`, audited as `actor`.
 */
export function systemCtx(deps: AppDeps, org: OrgRef, actor: Actor = SYSTEM_ACTOR): ServiceCtx {
  return {
    db: deps.db,
    org,
    actor,
    role: "owner",
    permissions: ROLE_PERMISSIONS.owner,
    accountRole: null,
    config: deps.config,
    keyring: deps.keyring,
    logger: deps.logger,
  };
}

/** The context with a job group: the caller's (a request's), or a new one for work that has none. */
export function withJobGroup(ctx: ServiceCtx): ServiceCtx & { jobGroup: string } {
  return ctx.jobGroup ? (ctx as ServiceCtx & { jobGroup: string }) : { ...ctx, jobGroup: randomUUID() };
}

/**
 * Runs `fn` in one transaction (or in the caller's, when already inside one).
 * Inside, use only `tx.db`: on PGlite the outer handle waits for the transaction.
 */
export function inTransaction<T>(ctx: ServiceCtx, fn: (tx: ServiceCtx) => Promise<T>): Promise<T> {
  if (ctx.db.isTransaction) return fn(ctx);
  return ctx.db.transaction().execute((trx) => fn({ ...ctx, db: trx }));
}
