/**
 * The `remoteVpn` section of the devices that run the remote worker VPN,
 * built from their installation rows and the application's state, with the
 * server key and EAP passwords decrypted (the desired config is sealed at
 * rest as a whole, services/desired-config-seal.ts).
 */
import type { ConfigRemoteVpn } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../../../db/schema.ts";
import type { Keyring } from "../../../secrets/keyring.ts";
import { appSecretAad } from "../../types.ts";
import type { RemoteVpnSettings } from "./install.ts";
import { asState, eapPasswords } from "./state.ts";

export const REMOTE_VPN_APP_ID = "remote-vpn";

/** `= any($1)` for a uuid list (as services/desired-config.ts does; repeated here to keep the import one-way). */
const anyUuid = (ids: readonly string[]) => sql<string>`any(${`{${ids.join(",")}}`}::uuid[])`;

export async function loadRemoteVpnConfigs(
  db: Db,
  keyring: Keyring,
  orgId: string,
  deviceIds: readonly string[],
): Promise<Map<string, ConfigRemoteVpn>> {
  const out = new Map<string, ConfigRemoteVpn>();
  if (deviceIds.length === 0) return out;
  const rows = await db
    .selectFrom("app_installations")
    .innerJoin("purchased_apps", "purchased_apps.id", "app_installations.purchase_id")
    .select([
      "app_installations.device_id",
      "app_installations.settings",
      "purchased_apps.id as purchase_id",
      "purchased_apps.state",
    ])
    .where("app_installations.organization_id", "=", orgId)
    .where("purchased_apps.app_id", "=", REMOTE_VPN_APP_ID)
    .where("app_installations.device_id", "=", anyUuid(deviceIds))
    .execute();
  // One purchase per organization: decrypt its secrets once, not per device.
  const opened = new Map<string, Omit<ConfigRemoteVpn, "pool" | "dns" | "subnets"> | null>();
  for (const row of rows) {
    if (!opened.has(row.purchase_id)) {
      const state = asState(row.state);
      if (!state.certificate || !state.privateKeyEnc || !state.ca || !state.serverId) opened.set(row.purchase_id, null);
      else {
        const passwords = eapPasswords(keyring, row.purchase_id, state);
        const users = [...(state.users ?? [])].sort((a, b) => a.name.localeCompare(b.name));
        opened.set(row.purchase_id, {
          serverId: state.serverId,
          serverCertificate: state.certificate.pem,
          serverKey: keyring.decrypt(state.privateKeyEnc, appSecretAad(row.purchase_id)),
          caCertificate: state.ca.pem,
          crl: state.crl ?? null,
          eapUsers: users
            .filter((u) => u.auth === "eap" && passwords[u.name] !== undefined)
            .map((u) => ({ name: u.name, password: passwords[u.name] as string })),
          certificateUsers: users.some((u) => u.auth === "certificate"),
        });
      }
    }
    const common = opened.get(row.purchase_id);
    if (!common) continue;
    const settings = row.settings as unknown as RemoteVpnSettings;
    out.set(row.device_id, { ...common, pool: settings.pool, dns: settings.dns, subnets: settings.subnets });
  }
  return out;
}
