/**
 * The `--simple-connect` argument for a modem and its fingerprint. mmcli
 * takes the settings as one `key=value,key=value` list (ModemManager's simple
 * connect properties: apn, ip-type, allowed-auth, user, password,
 * allow-roaming); the protocol keeps commas, quotes and `=` out of the values.
 */
import { createHash } from "node:crypto";
import type { ConfigLte } from "@tern/protocol";

export function simpleConnectArg(lte: ConfigLte): string {
  const pairs = [`apn=${lte.apn}`, `ip-type=${lte.ipType}`, `allow-roaming=${lte.allowRoaming ? "yes" : "no"}`];
  if (lte.auth !== "none") pairs.push(`allowed-auth=${lte.auth}`, `user=${lte.username}`, `password=${lte.password}`);
  return `--simple-connect=${pairs.join(",")}`;
}

/** Text safe for logs and errors: the password and PIN replaced. */
export function redactMmcli(text: string): string {
  return text.replace(/(password=)[^,\s]*/g, "$1<redacted>").replace(/(--pin=)\S*/g, "$1<redacted>");
}

/** Identifies the connect settings in force (the password included, so a new password reconnects). */
export function connectFingerprint(lte: ConfigLte): string {
  return createHash("sha256").update(simpleConnectArg(lte)).digest("hex");
}

/** Remaining tries of a lock from `unlock-retries` (["sim-pin (3)", "sim-puk (10)"]), null when not reported. */
export function unlockRetries(retries: readonly string[] | undefined, lock: string): number | null {
  for (const r of retries ?? []) {
    const m = /^(\S+) \((\d+)\)$/.exec(r.trim());
    if (m && m[1] === lock) return Number(m[2]);
  }
  return null;
}
