/**
 * The protocol's LteStatus from what mmcli reports: modem, signal, SIM and
 * the connected bearer. Pure, so each recorded modem state is one test.
 */
import { LteModemState, type LteStatus, type LteModemState as ModemStateSchema } from "@tern/protocol";
import { type BearerInfo, known, knownNumber, type ModemInfo, type ModemSignal, type SimInfo } from "./mmcli.ts";

type Access = LteStatus["accessTechnology"];

/** ModemManager's access technology names (MMModemAccessTechnology) by family. */
const ACCESS_FAMILY: Record<string, Access> = {
  "5gnr": "5gnr",
  lte: "lte",
  "lte-cat-m": "lte",
  "lte-nb-iot": "lte",
  umts: "umts",
  hsdpa: "umts",
  hsupa: "umts",
  hspa: "umts",
  "hspa-plus": "umts",
  gsm: "gsm",
  "gsm-compact": "gsm",
  gprs: "gsm",
  edge: "gsm",
};
const ACCESS_RANK: Access[] = ["5gnr", "lte", "umts", "gsm"];

/** The newest technology in use (a 5G NSA modem reports "lte, 5gnr"). */
export function accessTechnology(techs: readonly string[] | undefined): Access {
  const families = new Set((techs ?? []).map((t) => ACCESS_FAMILY[t.trim()]).filter((f): f is Access => f !== undefined));
  return ACCESS_RANK.find((f) => families.has(f)) ?? "none";
}

export function registration(value: string | undefined): NonNullable<LteStatus["registration"]> {
  const v = known(value) ?? "";
  if (v.startsWith("home")) return "home";
  if (v.startsWith("roaming")) return "roaming";
  if (v === "idle" || v === "searching" || v === "denied" || v === "emergency-only") return v;
  return "unknown";
}

function simStatus(info: ModemInfo, sim: SimInfo | null): LteStatus["simStatus"] {
  const g = info.modem.generic;
  if (g["state-failed-reason"] === "sim-missing" || known(g.sim) === null) return "absent";
  const lock = known(g["unlock-required"]);
  if (g.state === "locked" || (lock !== null && lock !== "none")) return "locked";
  return sim && known(sim.sim.properties.iccid) ? "ready" : "unknown";
}

export interface ModemReading {
  info: ModemInfo;
  signal: ModemSignal | null;
  sim: SimInfo | null;
  /** The connected bearer, if any. */
  bearer: BearerInfo | null;
}

export function lteStatus({ info, signal, sim, bearer }: ModemReading): LteStatus {
  const g = info.modem.generic;
  const threeGpp = info.modem["3gpp"];
  const access = accessTechnology(g["access-technologies"]);
  const bands = signal?.modem.signal;
  const values =
    (access === "5gnr" ? bands?.["5g"] : access === "umts" ? bands?.umts : access === "gsm" ? bands?.gsm : undefined) ??
    bands?.lte;
  const state: ModemStateSchema = LteModemState.safeParse(g.state).data ?? "unknown";
  const ipv4 = bearer?.bearer["ipv4-config"];
  const address = known(ipv4?.address);
  const prefix = known(ipv4?.prefix);
  const quality = knownNumber(g["signal-quality"]?.value);
  return {
    connected: state === "connected",
    simStatus: simStatus(info, sim),
    operator: known(threeGpp?.["operator-name"]) ?? "",
    signal: {
      rssiDbm: knownNumber(values?.rssi),
      rsrpDbm: knownNumber(values?.rsrp),
      rsrqDb: knownNumber(values?.rsrq),
      sinrDb: knownNumber(values?.snr),
    },
    accessTechnology: access,
    modemState: state,
    registration: registration(threeGpp?.["registration-state"]),
    unlockRequired: known(g["unlock-required"]),
    operatorCode: known(threeGpp?.["operator-code"]) ?? "",
    imei: known(threeGpp?.imei) ?? known(g["equipment-identifier"]) ?? "",
    iccid: (sim && known(sim.sim.properties.iccid)) ?? "",
    signalQuality: quality === null ? null : Math.max(0, Math.min(100, Math.round(quality))),
    bearerAddress: address && prefix ? `${address}/${prefix}` : "",
  };
}
