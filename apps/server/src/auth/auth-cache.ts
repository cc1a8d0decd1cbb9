/**
 * Per-instance cache of what authorize() reads from the database for a bearer
 * credential (its session or key, the caller's roles in the organization, the
 * organization's 2FA rule): a list request then runs its page query and
 * nothing else. Only successful look-ups are cached.
 *
 * Invalidation is all-or-nothing, so nothing needs to know which entry a change
 * touches:
 * - every instance (this one included) drops everything when the `tern_auth`
 *   notification arrives, which triggers on sessions, users, memberships,
 *   organizations, accounts, user_mfa and access_tokens send at commit
 *   (migration 20261125-801-list-indexes), and when its LISTEN connection is
 *   back after a loss (notifications may have been missed meanwhile). The
 *   payload is the sending transaction's id (migration
 *   20261202-201-auth-notify-txid): the instance hears each change on every
 *   connection that LISTENs and drops once, at the first hearing, not again
 *   for the later ones (they would drop entries cached after the change);
 * - the instance that made the change drops everything before the change's
 *   COMMIT returns, so its request answers after the drop and the next request
 *   on it never sees the old value: every pooled connection LISTENs on
 *   `tern_auth` too (db/database.ts `ownNotifications`), and PostgreSQL hands a
 *   session its own transaction's notifications before the COMMIT's answer
 *   (PGlite's one connection delivers within the query as well). A write that
 *   touches none of those tables (a device approval, a tunnel) keeps the cache;
 * - a look-up that was running while the cache was dropped is not stored
 *   (generation check), so a value read before a change cannot outlive it;
 * - entries live at most `ttlMs` and never past their session's or their
 *   JWT's expiry (the JWT's signature was checked when the entry was made: the
 *   entry is keyed by the token itself).
 */
import type { EventEmitter } from "node:events";
import type { Logger } from "pino";
import { type Bus, type BusTarget, createBus } from "../gateway/bus.ts";
import type { Access, Principal } from "./access.ts";
import { hashSecretToken } from "./secret-tokens.ts";

export interface AuthCacheEntry {
  principal: Principal;
  /** Access in the organization, before an account-scoped route narrows it. */
  resolved: Access;
  /** Epoch ms after which the entry is void (session expiry, or the cache's time to live). */
  validUntil: number;
  /** A key's last_used_at as last written (epoch ms); null for sessions. */
  lastUsedAt: number | null;
}

export interface AuthCacheOptions {
  maxEntries: number;
  ttlMs: number;
}

export class AuthCache {
  private readonly entries = new Map<string, AuthCacheEntry>();
  /** Transactions whose change this instance has dropped the cache for, oldest first (a few hundred at most). */
  private readonly heard = new Set<string>();
  private generationCount = 0;
  private bus: Bus | null = null;
  private own: EventEmitter | null = null;

  constructor(private readonly options: AuthCacheOptions = { maxEntries: 10_000, ttlMs: 60_000 }) {}

  /** The key of a credential asking for one organization selector (`o:<id>`, `a:<account>`, `d` = its default). */
  static key(token: string, selector: string): string {
    return `${hashSecretToken(token)}|${selector}`;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Taken before a look-up; pass it to set(). */
  generation(): number {
    return this.generationCount;
  }

  get(key: string, now = Date.now()): AuthCacheEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now >= entry.validUntil) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Stores a look-up's result unless the cache was dropped since `generation` was taken. */
  set(key: string, generation: number, entry: Omit<AuthCacheEntry, "validUntil"> & { validUntil: number | null }): void {
    if (generation !== this.generationCount) return;
    if (this.entries.size >= this.options.maxEntries) {
      // The oldest insertion goes first (Map keeps insertion order).
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const ttlEnd = Date.now() + this.options.ttlMs;
    this.entries.set(key, { ...entry, validUntil: Math.min(entry.validUntil ?? ttlEnd, ttlEnd) });
  }

  clear(): void {
    this.generationCount++;
    this.entries.clear();
  }

  /**
   * Listens on `tern_auth`: its own LISTEN connection on PostgreSQL (other instances' changes, and changes made
   * outside the server) and the pool's connections (`ownNotifications`: this instance's changes, heard before
   * their COMMIT returns); PGlite delivers in-process.
   */
  async start(target: BusTarget & { ownNotifications?: EventEmitter | undefined }, logger: Logger): Promise<void> {
    const bus = createBus(target, logger.child({ component: "auth-cache" }), ["tern_auth"]);
    bus.on("tern_auth", this.onChange);
    bus.onReconnect(this.onReconnect);
    target.ownNotifications?.on("tern_auth", this.onChange);
    this.own = target.ownNotifications ?? null;
    await bus.start();
    this.bus = bus;
  }

  async close(): Promise<void> {
    const bus = this.bus;
    this.bus = null;
    this.own?.off("tern_auth", this.onChange);
    this.own = null;
    this.clear();
    await bus?.close();
  }

  /** A change heard: drop everything, unless this transaction's change was heard already (payload: its id). */
  private readonly onChange = (payload = "") => {
    if (payload !== "") {
      if (this.heard.has(payload)) return;
      this.heard.add(payload);
      if (this.heard.size > HEARD_TRANSACTIONS) this.heard.delete(this.heard.values().next().value as string);
    }
    this.clear();
  };

  private readonly onReconnect = () => this.clear();
}

/**
 * Transaction ids remembered. The later hearings of a change come within milliseconds of the first; a busy
 * instance sees far fewer than this many changes of access in that time.
 */
const HEARD_TRANSACTIONS = 256;

/** Marks an entry's key as used now when its last write is older than `resolutionMs` (the caller writes it). */
export function lastUsedIsStale(entry: AuthCacheEntry, now: number, resolutionMs: number): boolean {
  return entry.lastUsedAt !== null && now - entry.lastUsedAt > resolutionMs;
}
