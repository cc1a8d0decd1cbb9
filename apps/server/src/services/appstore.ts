/**
 * App store: the built-in catalog, purchases (one per application and
 * organization) and per-application actions, each with its own validated
 * params. Secrets an action keeps (fields ending in `Enc`) are stored
 * encrypted in the application's state and never returned. Applications that
 * run on devices (remote-vpn) keep one `app_installations` row per device; an
 * action that changes what devices run queues their jobs (type
 * `application`) in its transaction.
 */
import { randomUUID } from "node:crypto";
import type { CatalogApp, PurchasedApp } from "@tern/protocol";
import { issuesToDetails } from "@tern/protocol";
import { CATALOG, findCatalogApp, toCatalogApp } from "../appstore/catalog.ts";
import { toJson } from "../db/json.ts";
import type { PurchasedAppRow } from "../db/schema.ts";
import { ApiError, conflict, invalidField, notFound, validationFailed } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { queueConfigJobs } from "./desired-config.ts";

export function listCatalog(): CatalogApp[] {
  return CATALOG.map(toCatalogApp);
}

/** The state as callers see it: without encrypted secrets. */
function publicState(state: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(state).filter(([k]) => !k.endsWith("Enc")));
}

export function toPurchasedApp(row: PurchasedAppRow): PurchasedApp {
  const app = findCatalogApp(row.app_id);
  return {
    id: row.id,
    org: row.organization_id,
    // An application withdrawn from the catalog still shows under its id.
    app: { id: row.app_id, name: app?.name ?? row.app_id },
    purchasedAt: row.purchased_at.toISOString(),
    state: publicState(row.state),
    lastAction: row.last_action,
  };
}

export const PURCHASED_LIST: ListSpec = {
  fields: {
    id: { column: "id", type: "uuid" },
    app: { column: "app_id", type: "text" },
    purchasedAt: { column: "purchased_at", type: "timestamp" },
  },
  defaultSort: { key: "purchasedAt", order: "asc" },
  tiebreaker: "id",
};

export async function listPurchasedApps(ctx: ServiceCtx, query: ListQuery) {
  const base = ctx.db.selectFrom("purchased_apps").selectAll().where("organization_id", "=", ctx.org.id);
  const { rows, total } = await runList(ctx.db, base, query, PURCHASED_LIST);
  return { items: rows.map(toPurchasedApp), total };
}

async function loadPurchased(ctx: ServiceCtx, id: string, lock = false): Promise<PurchasedAppRow> {
  let query = ctx.db.selectFrom("purchased_apps").selectAll().where("organization_id", "=", ctx.org.id).where("id", "=", id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("purchased application");
  return row;
}

export async function getPurchasedApp(ctx: ServiceCtx, id: string): Promise<PurchasedApp> {
  return toPurchasedApp(await loadPurchased(ctx, id));
}

export async function purchaseApp(ctx: ServiceCtx, appId: string): Promise<PurchasedApp> {
  const app = findCatalogApp(appId);
  if (!app)
    throw new ApiError("NOT_FOUND", `no application ${appId} in the catalog`, [
      { path: "id", message: `catalog applications: ${CATALOG.map((a) => a.id).join(", ")}` },
    ]);
  return inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .insertInto("purchased_apps")
      .values({ id: randomUUID(), organization_id: tx.org.id, app_id: app.id, state: toJson({}) })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: { code?: string }) => {
        if (err?.code === "23505") throw conflict(`${app.name} is already purchased in this organization`);
        throw err;
      });
    const purchased = toPurchasedApp(row);
    await recordAudit(tx, { action: "purchase", resource: "applications", resourceId: purchased.id, after: purchased });
    return purchased;
  });
}

export async function deletePurchasedApp(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const before = toPurchasedApp(await loadPurchased(tx, id, true));
    const installed = await tx.db.selectFrom("app_installations").select("device_id").where("purchase_id", "=", id).execute();
    await tx.db.deleteFrom("purchased_apps").where("organization_id", "=", tx.org.id).where("id", "=", id).execute();
    // The installations went with the purchase: those devices stop running the application.
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: installed.map((r) => r.device_id),
      type: "application",
      tasks: [{ kind: "app-remove", summary: `remove application ${before.app.name}` }],
    });
    await recordAudit(tx, { action: "delete", resource: "applications", resourceId: id, before, after: { jobs: jobIds.length } });
  });
}

export interface AppActionResult {
  app: PurchasedApp;
  action: string;
  result: Record<string, unknown>;
  /** Jobs queued for devices whose configuration the action changed. */
  jobIds: string[];
}

/** Runs one action of a purchased application with params validated by that action's schema. */
export async function runAppAction(
  ctx: ServiceCtx,
  id: string,
  request: { action: string | undefined; params: Record<string, unknown> },
): Promise<AppActionResult> {
  return inTransaction(ctx, async (tx) => {
    const row = await loadPurchased(tx, id, true);
    const app = findCatalogApp(row.app_id);
    if (!app) throw validationFailed(`application ${row.app_id} is no longer in the catalog and has no actions`);
    const allowed = Object.keys(app.actions).join(", ");
    if (request.action === undefined) throw invalidField("action", `give an action; ${app.name} has: ${allowed}`);
    const name = request.action;
    const action = Object.hasOwn(app.actions, name) ? app.actions[name] : undefined;
    if (!action) throw invalidField("action", `unknown action "${name}" for ${app.name}; allowed: ${allowed}`);
    const parsed = action.params.safeParse(request.params);
    if (!parsed.success)
      throw validationFailed(
        `invalid params for ${name}`,
        issuesToDetails(parsed.error.issues).map((d) => ({ ...d, path: d.path ? `params.${d.path}` : "params" })),
      );
    const outcome = await action.run({ ctx: tx, purchaseId: row.id, state: row.state }, parsed.data);
    // Write-only params: the audit log records that they were set, never their value.
    const auditedParams = Object.fromEntries(
      Object.entries(parsed.data as Record<string, unknown>).map(([k, v]) =>
        action.secretParams?.includes(k) && v !== undefined ? [k, "[redacted]"] : [k, v],
      ),
    );
    const lastAction = { name, at: new Date().toISOString(), result: outcome.summary };
    const updated = await tx.db
      .updateTable("purchased_apps")
      .set({ state: toJson(outcome.state), last_action: toJson(lastAction) })
      .where("id", "=", row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // After the state is saved: the compile step reads the application's new state.
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: outcome.devices ?? [],
      type: "application",
      tasks: [{ kind: `app-${name}`, summary: `${app.name}: ${outcome.summary}` }],
    });
    await recordAudit(tx, {
      action: name,
      resource: "applications",
      resourceId: row.id,
      before: { app: row.app_id, state: publicState(row.state) },
      after: { app: row.app_id, params: auditedParams, result: outcome.summary, jobs: jobIds.length },
    });
    return { app: toPurchasedApp(updated), action: name, result: outcome.result, jobIds };
  });
}
