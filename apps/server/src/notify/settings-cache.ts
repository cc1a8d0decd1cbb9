/**
 * Each organization's notification settings (rules, e-mail, webhook with its
 * secret) and name, kept for a few seconds: the rule engine judges every
 * status message against them and must not query for each. A change an admin
 * makes is in effect within TTL_MS on every instance.
 */
import type { EmailConf } from "@tern/protocol";
import type { Db } from "../db/schema.ts";
import type { Keyring } from "../secrets/keyring.ts";
import { type FullRules, loadNotificationChannels } from "../services/notifications/settings.ts";

export interface OrgSettings {
  orgId: string;
  orgName: string;
  rules: FullRules;
  email: EmailConf;
  webhook: { enabled: boolean; url: string; minSeverity: EmailConf["minSeverity"]; secret: string | null };
  loadedAt: number;
}

export const SETTINGS_TTL_MS = 10_000;

export class SettingsCache {
  private readonly entries = new Map<string, OrgSettings>();
  private readonly loading = new Map<string, Promise<OrgSettings | null>>();

  constructor(
    private readonly db: Db,
    private readonly keyring: Keyring,
    private readonly ttlMs = SETTINGS_TTL_MS,
  ) {}

  /** The settings if cached and fresh (no I/O). */
  peek(orgId: string): OrgSettings | undefined {
    const s = this.entries.get(orgId);
    return s && Date.now() - s.loadedAt < this.ttlMs ? s : undefined;
  }

  /** Cached, or loaded now (one load per organization at a time); null for an organization that is gone. */
  async get(orgId: string): Promise<OrgSettings | null> {
    const fresh = this.peek(orgId);
    if (fresh) return fresh;
    let pending = this.loading.get(orgId);
    if (!pending) {
      pending = this.load(orgId).finally(() => this.loading.delete(orgId));
      this.loading.set(orgId, pending);
    }
    return pending;
  }

  private async load(orgId: string): Promise<OrgSettings | null> {
    const org = await this.db.selectFrom("organizations").select("name").where("id", "=", orgId).executeTakeFirst();
    if (!org) {
      this.entries.delete(orgId);
      return null;
    }
    const channels = await loadNotificationChannels({ db: this.db, org: { id: orgId }, keyring: this.keyring });
    const settings: OrgSettings = { orgId, orgName: org.name, ...channels, loadedAt: Date.now() };
    this.entries.set(orgId, settings);
    return settings;
  }
}
