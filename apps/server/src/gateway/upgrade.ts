/**
 * The websocket handshake of a device: `GET /api/connect/ws` with
 * `Authorization: Bearer <device token>`. The token is looked up by its
 * SHA-256 hash; an unknown token is answered 401, a device not yet approved
 * 403, both with the API's JSON error body so the reason is readable, before
 * any websocket exists. The token only selects the device: the link is the
 * device's once its hello proves the device key (link-handler.ts).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ErrorBody, ErrorCode } from "@tern/protocol";
import { sql } from "kysely";
import { hashSecretToken } from "../auth/secret-tokens.ts";
import { GroupCommit } from "../db/group-commit.ts";
import type { Db } from "../db/schema.ts";
import { sharedString } from "../memory/shared-string.ts";

export const DEVICE_WS_PATH = "/api/connect/ws";

/** The device row a link stands for, with its organization (for system work done on its behalf). */
export interface LinkDevice {
  id: string;
  orgId: string;
  accountId: string;
  orgName: string;
  machineId: string;
  /** The device key the hello must prove; null for a device registered before keys (it binds the one it proves). */
  publicKey: string | null;
}

export type UpgradeOutcome =
  | { ok: true; device: LinkDevice }
  | {
      ok: false;
      status: 401 | 403 | 404 | 503;
      code: ErrorCode;
      message: string;
      kind: "unauthenticated" | "not-approved" | "bad-path";
    };

export function bearerToken(req: IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return match?.[1] ?? null;
}

/** The device (and organization) of a device token's hash, in one statement for any number of hashes. */
async function devicesByTokenHash(db: Db, hashes: readonly string[]) {
  const rows = await db
    .selectFrom("devices")
    .innerJoin("organizations", "organizations.id", "devices.organization_id")
    .select([
      "devices.id",
      "devices.organization_id",
      "devices.is_approved",
      "devices.machine_id",
      "devices.public_key",
      "devices.device_token_hash",
      "organizations.account_id",
      "organizations.name as org_name",
    ])
    .where("devices.device_token_hash", "=", sql<string>`any(${hashes}::text[])`)
    .execute();
  const byHash = new Map(rows.map((r) => [r.device_token_hash, r]));
  return hashes.map((h) => byHash.get(h));
}

type TokenLookup = (hash: string) => Promise<Awaited<ReturnType<typeof devicesByTokenHash>>[number]>;

/**
 * authenticateUpgrade with the token look-ups of upgrades arriving together in one statement (a group
 * commit with a short window: a fleet reconnecting after a restart sends thousands at once).
 */
export function upgradeAuthenticator(db: Db, windowMs: number): (req: IncomingMessage) => Promise<UpgradeOutcome> {
  const batch = new GroupCommit<string, Awaited<ReturnType<TokenLookup>>>(
    (hashes) => devicesByTokenHash(db, hashes),
    500,
    windowMs,
  );
  return (req) => authenticateUpgrade(db, req, (hash) => batch.submit(hash));
}

export async function authenticateUpgrade(
  db: Db,
  req: IncomingMessage,
  lookup: TokenLookup = async (hash) => (await devicesByTokenHash(db, [hash]))[0],
): Promise<UpgradeOutcome> {
  const path = new URL(req.url ?? "/", "http://device.invalid").pathname;
  if (path !== DEVICE_WS_PATH) {
    return { ok: false, status: 404, code: "NOT_FOUND", message: `no websocket at ${path}`, kind: "bad-path" };
  }
  const token = bearerToken(req);
  if (!token) {
    return {
      ok: false,
      status: 401,
      code: "UNAUTHENTICATED",
      message: "missing Authorization: Bearer <device token>",
      kind: "unauthenticated",
    };
  }
  const row = await lookup(hashSecretToken(token));
  if (!row) return { ok: false, status: 401, code: "UNAUTHENTICATED", message: "unknown device token", kind: "unauthenticated" };
  if (!row.is_approved) {
    return {
      ok: false,
      status: 403,
      code: "FORBIDDEN",
      message: `device ${row.id} is not approved yet: an administrator approves it with PUT /api/devices/${row.id} {"isApproved": true}`,
      kind: "not-approved",
    };
  }
  return {
    ok: true,
    device: {
      // Held for the link's life, as the rule engine's and the monitors' state is: one instance of each.
      id: sharedString(row.id),
      orgId: sharedString(row.organization_id),
      accountId: sharedString(row.account_id),
      orgName: sharedString(row.org_name),
      machineId: row.machine_id,
      publicKey: row.public_key,
    },
  };
}

/**
 * The host (and port) the device reached this server at, which its hello must have signed: the
 * Host header, or with a trusted proxy the first X-Forwarded-Host.
 */
export function requestHost(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers["x-forwarded-host"] ?? "")
        .split(",")[0]
        ?.trim()
    : "";
  return (forwarded || req.headers.host || "").toLowerCase();
}

const REASONS: Record<number, string> = { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 503: "Service Unavailable" };

/** Answers the upgrade request with an HTTP error and the JSON error body, then closes the socket. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  code: ErrorCode,
  message: string,
  /** Seconds the client should wait before trying again (503 only). */
  retryAfterS?: number,
): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: message, code, details: [] } satisfies ErrorBody);
  const headers = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}`,
    "Connection: close",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(status === 401 ? ['WWW-Authenticate: Bearer realm="tern-device"'] : []),
    ...(retryAfterS !== undefined ? [`Retry-After: ${retryAfterS}`] : []),
  ];
  socket.end(`${headers.join("\r\n")}\r\n\r\n${body}`);
}
