/**
 * ModemManager's command-line client, `mmcli -J` (JSON output), parsed with
 * zod. Key names are those of mmcli's output table (ModemManager
 * cli/mmcli-output.c: "modem.generic.state", "modem.3gpp.registration-state",
 * "modem.signal.lte.rsrp", "sim.properties.iccid", "bearer.ipv4-config.address",
 * …); `-J` nests them by their dots. mmcli prints "--" for a value it does
 * not know (and for "unknown"/"none"); `known()` turns that into null.
 * Only the keys the driver reads are declared; the rest is ignored.
 */
import * as z from "zod";
import { AgentError } from "../../errors.ts";
import type { Runner } from "../../runner.ts";

const Text = z.string();
const TextList = z.array(z.string());

export const ModemList = z.object({ "modem-list": TextList });

export const ModemInfo = z.object({
  modem: z.object({
    "dbus-path": Text,
    generic: z.object({
      state: Text,
      "state-failed-reason": Text.optional(),
      "unlock-required": Text.optional(),
      /** e.g. ["sim-pin (3)", "sim-puk (10)"]. */
      "unlock-retries": TextList.optional(),
      "access-technologies": TextList.optional(),
      "signal-quality": z.object({ value: Text, recent: Text.optional() }).optional(),
      sim: Text.optional(),
      /** e.g. ["cdc-wdm0 (qmi)", "wwan0 (net)"]. */
      ports: TextList.optional(),
      bearers: TextList.optional(),
      "equipment-identifier": Text.optional(),
    }),
    "3gpp": z
      .object({
        imei: Text.optional(),
        "operator-code": Text.optional(),
        "operator-name": Text.optional(),
        "registration-state": Text.optional(),
      })
      .optional(),
  }),
});
export type ModemInfo = z.infer<typeof ModemInfo>;

const SignalValues = z.object({
  rssi: Text.optional(),
  rsrq: Text.optional(),
  rsrp: Text.optional(),
  snr: Text.optional(),
});

export const ModemSignal = z.object({
  modem: z.object({
    signal: z.object({
      refresh: z.object({ rate: Text }).optional(),
      lte: SignalValues.optional(),
      "5g": SignalValues.optional(),
      umts: SignalValues.optional(),
      gsm: SignalValues.optional(),
    }),
  }),
});
export type ModemSignal = z.infer<typeof ModemSignal>;

export const SimInfo = z.object({
  sim: z.object({
    "dbus-path": Text,
    properties: z.object({
      iccid: Text.optional(),
      imsi: Text.optional(),
      "operator-name": Text.optional(),
    }),
  }),
});
export type SimInfo = z.infer<typeof SimInfo>;

export const BearerInfo = z.object({
  bearer: z.object({
    "dbus-path": Text,
    status: z.object({ connected: Text, interface: Text.optional() }),
    properties: z.object({
      apn: Text.optional(),
      "ip-type": Text.optional(),
      "allowed-auth": Text.optional(),
      user: Text.optional(),
    }),
    "ipv4-config": z
      .object({ method: Text.optional(), address: Text.optional(), prefix: Text.optional(), gateway: Text.optional() })
      .optional(),
  }),
});
export type BearerInfo = z.infer<typeof BearerInfo>;

/** mmcli's "--" (unknown, none, empty) as null. */
export function known(value: string | undefined): string | null {
  return value === undefined || value === "--" || value === "" ? null : value;
}

/** A number from mmcli's text ("-95.00"), null when unknown. */
export function knownNumber(value: string | undefined): number | null {
  const v = known(value);
  if (v === null) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Runs `mmcli -J …` and parses its output with `schema`; a non-JSON or unexpected answer is a clear error. */
export class Mmcli {
  constructor(
    private readonly runner: Runner,
    private readonly program: string,
  ) {}

  async json<T>(schema: z.ZodType<T>, args: string[]): Promise<T> {
    const r = await this.runner.run([this.program, "-J", ...args], { timeoutMs: 20_000 });
    let data: unknown;
    try {
      data = JSON.parse(r.stdout);
    } catch {
      throw new AgentError("DRIVER_FAILED", `mmcli ${args.join(" ")}: not JSON: ${r.stdout.slice(0, 200)}`);
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new AgentError("DRIVER_FAILED", `mmcli ${args.join(" ")}: unexpected output: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  }

  /** A command that changes the modem (`--simple-connect`, `--pin`, `-e`); long ones (connect) get two minutes. */
  async act(args: string[], timeoutMs = 30_000): Promise<void> {
    await this.runner.run([this.program, ...args], { timeoutMs });
  }

  list(): Promise<z.infer<typeof ModemList>> {
    return this.json(ModemList, ["-L"]);
  }
  modem(path: string): Promise<ModemInfo> {
    return this.json(ModemInfo, ["-m", path]);
  }
  signal(path: string): Promise<ModemSignal> {
    return this.json(ModemSignal, ["-m", path, "--signal-get"]);
  }
  sim(path: string): Promise<SimInfo> {
    return this.json(SimInfo, ["-i", path]);
  }
  bearer(path: string): Promise<BearerInfo> {
    return this.json(BearerInfo, ["-b", path]);
  }

  /** The modem whose network port is `ifname` ("wwan0 (net)"), or null. */
  async modemFor(ifname: string): Promise<ModemInfo | null> {
    for (const path of (await this.list())["modem-list"]) {
      const info = await this.modem(path);
      if ((info.modem.generic.ports ?? []).some((p) => p === `${ifname} (net)`)) return info;
    }
    return null;
  }
}
