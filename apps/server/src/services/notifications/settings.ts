/**
 * Notification configuration of an organization (general rules per event,
 * e-mail, webhook) and the account's default, which new organizations copy.
 * An organization without a settings row reads the protocol's defaults
 * (`DEFAULT_NOTIFICATION_RULES`); rules of events added later read their
 * default too, so a stored row never hides a new event.
 */

import type { ErrorDetail } from "@tern/protocol";
import {
  DEFAULT_NOTIFICATION_RULES,
  EmailConf,
  NotificationEvent,
  NotificationRule,
  type NotificationRules,
  type Severity,
  type WebhookConf,
  type WebhookConfUpdate,
} from "@tern/protocol";
import type { z } from "zod";
import { toJson } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";
import { ApiError, validationFailed } from "../../http/errors.ts";
import { checkWebhookUrl, webhookTargetPolicy } from "../../notify/delivery/webhook-target.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";

export type FullRules = Record<NotificationEvent, NotificationRule>;
export type StoredWebhook = { enabled: boolean; url: string; minSeverity: Severity };

const DEFAULT_RULES: FullRules = Object.fromEntries(
  NotificationEvent.options.map((e) => [e, NotificationRule.parse(DEFAULT_NOTIFICATION_RULES[e])]),
) as FullRules;
const DEFAULT_EMAIL: EmailConf = EmailConf.parse({});
const DEFAULT_WEBHOOK: StoredWebhook = { enabled: false, url: "", minSeverity: "warning" };

/** Every event's rule: the stored one, else the protocol default. */
export function completeRules(stored: NotificationRules | null | undefined): FullRules {
  return Object.fromEntries(NotificationEvent.options.map((e) => [e, stored?.[e] ?? DEFAULT_RULES[e]])) as FullRules;
}

/**
 * Replaces the named events' rules in `current`. Thresholds are in the event's
 * own unit (an empty unit takes it); events measured without a threshold take none.
 */
export function mergeRules(current: FullRules, changes: NotificationRules, pathPrefix = "rules"): FullRules {
  const details: ErrorDetail[] = [];
  const next = { ...current };
  for (const [event, rule] of Object.entries(changes) as [NotificationEvent, NotificationRule][]) {
    const unit = DEFAULT_RULES[event].thresholdUnit;
    const at = (field: string) => `${pathPrefix}.${event}.${field}`;
    if (unit === "") {
      if (rule.warningThreshold !== null || rule.criticalThreshold !== null)
        details.push({ path: at("warningThreshold"), message: `${event} has no threshold` });
      if (rule.thresholdUnit !== "") details.push({ path: at("thresholdUnit"), message: `${event} has no threshold unit` });
    } else if (rule.thresholdUnit !== "" && rule.thresholdUnit !== unit) {
      details.push({ path: at("thresholdUnit"), message: `thresholds of ${event} are in ${unit}` });
    }
    next[event] = { ...rule, thresholdUnit: unit };
  }
  if (details.length) throw validationFailed(details[0]!.message, details);
  return next;
}

interface OrgSettings {
  rules: FullRules;
  email: EmailConf;
  webhook: StoredWebhook;
  secretEnc: string | null;
}

async function loadSettings(db: Db, orgId: string, lock = false): Promise<OrgSettings> {
  let query = db.selectFrom("notification_settings").selectAll().where("organization_id", "=", orgId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return {
    rules: completeRules(row?.rules),
    email: row?.email ?? DEFAULT_EMAIL,
    webhook: row?.webhook ?? DEFAULT_WEBHOOK,
    secretEnc: row?.webhook_secret_enc ?? null,
  };
}

async function saveSettings(db: Db, orgId: string, s: OrgSettings): Promise<void> {
  const values = {
    rules: toJson(s.rules),
    email: toJson(s.email),
    webhook: toJson(s.webhook),
    webhook_secret_enc: s.secretEnc,
  };
  await db
    .insertInto("notification_settings")
    .values({ organization_id: orgId, ...values })
    .onConflict((oc) => oc.column("organization_id").doUpdateSet({ ...values, updated_at: new Date() }))
    .execute();
}

/** Changes the settings row in one transaction with its audit entry. */
async function changeSettings<T>(
  ctx: ServiceCtx,
  what: string,
  change: (current: OrgSettings, tx: ServiceCtx) => OrgSettings,
  view: (s: OrgSettings) => T,
): Promise<T> {
  return inTransaction(ctx, async (tx) => {
    const current = await loadSettings(tx.db, tx.org.id, true);
    const next = change(current, tx);
    await saveSettings(tx.db, tx.org.id, next);
    await recordAudit(tx, {
      action: "update",
      resource: "notificationsConf",
      resourceId: what,
      before: view(current),
      after: view(next),
    });
    return view(next);
  });
}

const rulesView = (s: OrgSettings) => ({ rules: s.rules });
const webhookView = (s: OrgSettings): WebhookConf => ({ ...s.webhook, secretSet: s.secretEnc !== null });

export async function getNotificationRules(ctx: ServiceCtx) {
  return rulesView(await loadSettings(ctx.db, ctx.org.id));
}

export function updateNotificationRules(ctx: ServiceCtx, input: { rules: NotificationRules }) {
  return changeSettings(ctx, "general", (s) => ({ ...s, rules: mergeRules(s.rules, input.rules) }), rulesView);
}

export async function getEmailConf(ctx: ServiceCtx): Promise<EmailConf> {
  return (await loadSettings(ctx.db, ctx.org.id)).email;
}

/** Recipients without duplicates; an enabled channel needs one. */
function checkedEmail(input: EmailConf, path = "recipients"): EmailConf {
  const email = { ...input, recipients: [...new Set(input.recipients)] };
  if (email.enabled && email.recipients.length === 0)
    throw validationFailed("an enabled e-mail channel needs recipients", [
      { path, message: "give at least one recipient, or disable the channel" },
    ]);
  return email;
}

export function updateEmailConf(ctx: ServiceCtx, input: EmailConf): Promise<EmailConf> {
  const email = checkedEmail(input);
  return changeSettings(
    ctx,
    "email",
    (s) => ({ ...s, email }),
    (s) => s.email,
  );
}

/** The AES-GCM associated data of an organization's webhook secret: a secret copied to another org will not decrypt. */
export const webhookSecretAad = (orgId: string) => `notification-webhook:${orgId}`;
const secretAad = webhookSecretAad;

export async function getWebhookConf(ctx: ServiceCtx): Promise<WebhookConf> {
  return webhookView(await loadSettings(ctx.db, ctx.org.id));
}

/**
 * Refuses a webhook URL that points at loopback, link-local, cloud metadata or
 * (unless allowed) private addresses: 400 WEBHOOK_TARGET_FORBIDDEN. Each
 * delivery checks again as it connects (notify/delivery/webhook-target.ts).
 */
export async function assertWebhookTargetAllowed(ctx: Pick<ServiceCtx, "config">, url: string): Promise<void> {
  if (url === "") return;
  // The URL is stored, returned by GET and written to the delivery log in clear: no place for a password.
  const parsed = new URL(url);
  if (parsed.username || parsed.password)
    throw validationFailed("a webhook URL may not carry credentials", [
      {
        path: "url",
        message: "remove user:password@ (the URL is stored and shown in clear; deliveries are signed with the secret)",
      },
    ]);
  const refused = await checkWebhookUrl(url, webhookTargetPolicy(ctx.config));
  if (refused) throw new ApiError("WEBHOOK_TARGET_FORBIDDEN", refused.message, [{ path: "url", message: refused.reason }]);
}

/** Sets the webhook; an omitted `secret` keeps the stored one. The secret is stored encrypted and never returned. */
export async function updateWebhookConf(ctx: ServiceCtx, input: z.output<typeof WebhookConfUpdate>): Promise<WebhookConf> {
  await assertWebhookTargetAllowed(ctx, input.url);
  return changeSettings(
    ctx,
    "webhook",
    (s, tx) => {
      const secretEnc = input.secret !== undefined ? tx.keyring.encrypt(input.secret, secretAad(tx.org.id)) : s.secretEnc;
      const details: ErrorDetail[] = [];
      if (input.enabled && input.url === "") details.push({ path: "url", message: "an enabled webhook needs a URL" });
      if (input.enabled && secretEnc === null)
        details.push({ path: "secret", message: "an enabled webhook needs a secret to sign its deliveries" });
      if (details.length) throw validationFailed(details[0]!.message, details);
      return { ...s, webhook: { enabled: input.enabled, url: input.url, minSeverity: input.minSeverity }, secretEnc };
    },
    webhookView,
  );
}

/** The webhook with its secret in clear, for delivery (the notification engine and the test delivery). */
export async function loadWebhookChannel(ctx: Pick<ServiceCtx, "db" | "org" | "keyring">) {
  const s = await loadSettings(ctx.db, ctx.org.id);
  return { ...s.webhook, secret: s.secretEnc === null ? null : ctx.keyring.decrypt(s.secretEnc, secretAad(ctx.org.id)) };
}

/** What the notification engine reads for delivery: rules, e-mail and the webhook with its secret. */
export async function loadNotificationChannels(ctx: Pick<ServiceCtx, "db" | "keyring"> & { org: { id: string } }) {
  const s = await loadSettings(ctx.db, ctx.org.id);
  const secret = s.secretEnc === null ? null : ctx.keyring.decrypt(s.secretEnc, secretAad(ctx.org.id));
  return { rules: s.rules, email: s.email, webhook: { ...s.webhook, secret } };
}

// ---- The account's default, applied to new organizations ----

async function loadAccountDefault(db: Db, accountId: string, lock = false) {
  let query = db.selectFrom("account_notification_defaults").selectAll().where("account_id", "=", accountId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return { rules: completeRules(row?.rules), email: row?.email ?? DEFAULT_EMAIL, stored: row !== undefined };
}

export async function getDefaultNotificationsConf(ctx: ServiceCtx) {
  const { rules, email } = await loadAccountDefault(ctx.db, ctx.org.accountId);
  return { rules, email };
}

export function updateDefaultNotificationsConf(ctx: ServiceCtx, input: { rules: NotificationRules; email: EmailConf }) {
  return inTransaction(ctx, async (tx) => {
    const current = await loadAccountDefault(tx.db, tx.org.accountId, true);
    const next = {
      rules: mergeRules(current.rules, input.rules),
      email: checkedEmail(input.email, "email.recipients"),
    };
    const values = { rules: toJson(next.rules), email: toJson(next.email) };
    await tx.db
      .insertInto("account_notification_defaults")
      .values({ account_id: tx.org.accountId, ...values })
      .onConflict((oc) => oc.column("account_id").doUpdateSet({ ...values, updated_at: new Date() }))
      .execute();
    await recordAudit(tx, {
      action: "update",
      resource: "notificationsConf",
      resourceId: "default",
      orgId: null,
      before: { rules: current.rules, email: current.email },
      after: next,
    });
    return next;
  });
}

/**
 * Gives a new organization the account's default rules and e-mail settings
 * (nothing when the account has none: the organization then reads the
 * protocol defaults). Runs in the transaction that creates the organization.
 */
export async function applyAccountNotificationDefaults(db: Db, orgId: string, accountId: string): Promise<void> {
  const def = await loadAccountDefault(db, accountId);
  if (!def.stored) return;
  await saveSettings(db, orgId, { rules: def.rules, email: def.email, webhook: DEFAULT_WEBHOOK, secretEnc: null });
}
