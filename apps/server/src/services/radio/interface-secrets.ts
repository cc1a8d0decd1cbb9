/**
 * Secrets of radio interfaces at rest: the SIM PIN and APN password of an
 * `lte` interface and the WPA passphrase of a `wifi` one. The API takes them
 * in clear and never returns them; the `devices.interfaces` JSON keeps them
 * AES-256-GCM encrypted with the server key (`pinEnc`, `passwordEnc`,
 * `passphraseEnc`), bound to device, interface and field, so a value copied
 * to another row or field does not open. Only the config compiler opens
 * them, to send the device its modem and access point settings.
 */
import type { DeviceInterface, LteSettings, WifiSettings } from "@tern/protocol";
import type { Keyring } from "../../secrets/keyring.ts";
import { invalid, type Problem } from "../../validate/index.ts";

/** What an lte/wifi object holds in the database: clear fields replaced by encrypted ones. */
type StoredLte = Omit<LteSettings, "pin" | "password"> & { pinEnc?: string; passwordEnc?: string };
type StoredWifi = Omit<WifiSettings, "passphrase"> & { passphraseEnc?: string };

/** Per radio settings object: each clear field and the encrypted field that stores it. */
export const SECRETS = {
  lte: [
    ["pin", "pinEnc"],
    ["password", "passwordEnc"],
  ],
  wifi: [["passphrase", "passphraseEnc"]],
} as const;
type Kind = keyof typeof SECRETS;

const aad = (deviceId: string, devId: string, field: string) => `interface-secret:${deviceId}:${devId}:${field}`;

type Loose = Record<string, unknown>;

/**
 * The interfaces as they will be stored: each lte/wifi object the request
 * brought has its clear secrets encrypted; a secret it left out keeps the
 * stored value, an empty one is removed. Objects the request did not touch
 * (same reference as stored) are kept as they are. Also checks what only the
 * whole device can tell: settings on an interface of the wrong kind, an
 * access point without a passphrase.
 */
export function sealInterfaceSecrets(
  keyring: Keyring,
  deviceId: string,
  stored: readonly DeviceInterface[],
  merged: readonly DeviceInterface[],
  pathOf: (devId: string) => string,
): { interfaces: DeviceInterface[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const byDevId = new Map(stored.map((i) => [i.devId, i]));
  const interfaces = merged.map((iface) => {
    const before = byDevId.get(iface.devId);
    const out: Loose = { ...iface };
    for (const kind of ["lte", "wifi"] as const) {
      const value = iface[kind] as Loose | null | undefined;
      if (value === undefined || value === null) continue;
      if (iface.deviceType !== kind) {
        problems.push(
          invalid(
            `${pathOf(iface.devId)}.${kind}`,
            `${kind} settings need an interface of deviceType ${kind}; ${iface.name} is ${iface.deviceType}`,
          ),
        );
        continue;
      }
      if (value === (before?.[kind] as unknown)) continue;
      out[kind] = seal(keyring, deviceId, iface.devId, kind, value, (before?.[kind] ?? null) as Loose | null);
    }
    const wifi = out.wifi as StoredWifi | null | undefined;
    if (iface.deviceType === "wifi" && wifi && !wifi.passphraseEnc)
      problems.push(
        invalid(
          `${pathOf(iface.devId)}.wifi.passphrase`,
          `the access point on ${iface.name} needs a passphrase (8 to 63 characters)`,
        ),
      );
    return out as DeviceInterface;
  });
  return { interfaces, problems };
}

function seal(keyring: Keyring, deviceId: string, devId: string, kind: Kind, value: Loose, before: Loose | null): Loose {
  const out: Loose = { ...value };
  for (const [clear, enc] of SECRETS[kind]) {
    const given = value[clear];
    delete out[clear];
    if (typeof given === "string" && given !== "") out[enc] = keyring.encrypt(given, aad(deviceId, devId, enc));
    else if (given === undefined && typeof before?.[enc] === "string") out[enc] = before[enc];
    else delete out[enc];
  }
  return out;
}

/** The interface as the API shows it: encrypted secrets left out. */
export function publicInterface(iface: DeviceInterface): DeviceInterface {
  const out: Loose = { ...iface };
  for (const kind of ["lte", "wifi"] as const) {
    const value = iface[kind] as Loose | null | undefined;
    if (!value) continue;
    const shown: Loose = { ...value };
    for (const [clear, enc] of SECRETS[kind]) {
      delete shown[enc];
      delete shown[clear];
    }
    out[kind] = shown;
  }
  return out as DeviceInterface;
}

/** The interface with its secrets in clear, for the config compiler. */
export function openInterfaceSecrets(keyring: Keyring, deviceId: string, iface: DeviceInterface): DeviceInterface {
  const out: Loose = { ...iface };
  for (const kind of ["lte", "wifi"] as const) {
    const value = iface[kind] as (StoredLte & StoredWifi & Loose) | null | undefined;
    if (!value) continue;
    const opened: Loose = { ...value };
    for (const [clear, enc] of SECRETS[kind]) {
      const sealed = value[enc];
      delete opened[enc];
      opened[clear] = typeof sealed === "string" ? keyring.decrypt(sealed, aad(deviceId, iface.devId, enc)) : "";
    }
    out[kind] = opened;
  }
  return out as DeviceInterface;
}

/** Every encrypted value of an interface list with its associated data, for re-encryption after a key rotation. */
export function interfaceSecretRefs(deviceId: string, interfaces: readonly DeviceInterface[]) {
  const refs: { devId: string; kind: Kind; field: string; aad: string }[] = [];
  for (const iface of interfaces)
    for (const kind of ["lte", "wifi"] as const) {
      const value = iface[kind] as Loose | null | undefined;
      if (!value) continue;
      for (const [, enc] of SECRETS[kind])
        if (typeof value[enc] === "string")
          refs.push({ devId: iface.devId, kind, field: enc, aad: aad(deviceId, iface.devId, enc) });
    }
  return refs;
}
