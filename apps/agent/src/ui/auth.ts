/**
 * Authentication of the troubleshooting page: one secret (password or token),
 * compared in constant time. A login sets a random session cookie (HttpOnly,
 * SameSite=Strict); API clients may send `Authorization: Bearer <secret>`.
 * Failed logins are slowed down, and state-changing requests must carry the
 * `X-Tern-UI` header, which a cross-site form cannot send.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../fs.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

export function secretMatches(given: string, secret: string): boolean {
  return timingSafeEqual(digest(given), digest(secret));
}

export class Sessions {
  private readonly sessions = new Map<string, number>();
  constructor(private readonly ttlMs = 8 * 3600_000) {}

  create(): string {
    const id = randomBytes(24).toString("base64url");
    this.sessions.set(id, Date.now() + this.ttlMs);
    return id;
  }

  valid(id: string | undefined): boolean {
    if (!id) return false;
    const until = this.sessions.get(id);
    if (until === undefined) return false;
    if (until < Date.now()) {
      this.sessions.delete(id);
      return false;
    }
    return true;
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }
}

/** The page secret kept in `<stateDir>/ui-secret` (0600), created on first use; `name` for another such secret. */
export async function loadOrCreateUiSecret(stateDir: string, name = "ui-secret"): Promise<string> {
  const path = join(stateDir, name);
  const existing = (await readFile(path, "utf8").catch(() => "")).trim();
  if (existing) return existing;
  const secret = randomBytes(18).toString("base64url");
  await writeFileAtomic(path, `${secret}\n`, 0o600);
  return secret;
}
