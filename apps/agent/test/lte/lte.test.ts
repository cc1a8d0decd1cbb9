/**
 * LTE driver against recorded `mmcli -J` outputs (./fixtures, one folder per
 * modem state) and a stand-in `mmcli` on the PATH (./stand-in/mmcli) that
 * records its calls and moves the modem between those states as
 * ModemManager would. Other commands (ip) go to a recording fake.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConfigInterface, type ConfigLte, LteStatus } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LinksDriver } from "../../src/drivers/links/index.ts";
import { LteDriver } from "../../src/drivers/lte/index.ts";
import { BearerInfo, ModemInfo, ModemSignal, SimInfo } from "../../src/drivers/lte/mmcli.ts";
import { lteStatus } from "../../src/drivers/lte/status.ts";
import { AgentError } from "../../src/errors.ts";
import { ExecRunner } from "../../src/runner.ts";
import { configWith } from "../support/configs.ts";
import { driverContext } from "../support/context.ts";
import { FakeRunner } from "../support/fake-runner.ts";

const here = new URL(".", import.meta.url).pathname;
const fixtures = join(here, "fixtures");
const standIn = join(here, "stand-in");
const read = (state: string, file: string): unknown => JSON.parse(readFileSync(join(fixtures, state, file), "utf8"));
const tryRead = (state: string, file: string): unknown => {
  try {
    return read(state, file);
  } catch {
    return null;
  }
};

/** The status the driver makes of one recorded state. */
function statusOf(state: string): LteStatus {
  const sim = tryRead(state, "sim.json");
  const bearer = tryRead(state, "bearer.json");
  return lteStatus({
    info: ModemInfo.parse(read(state, "modem.json")),
    signal: ModemSignal.parse(read(state, "signal.json")),
    sim: sim ? SimInfo.parse(sim) : null,
    bearer: bearer ? BearerInfo.parse(bearer) : null,
  });
}

describe("LTE status from recorded mmcli -J outputs", () => {
  it("connected: registration, operator, access technology, signal, SIM, IMEI, ICCID and the bearer address", () => {
    const s = statusOf("connected");
    expect(s).toEqual({
      connected: true,
      simStatus: "ready",
      operator: "Lab Mobile",
      signal: { rssiDbm: -68, rsrpDbm: -97, rsrqDb: -11, sinrDb: 12.4 },
      accessTechnology: "lte",
      modemState: "connected",
      registration: "home",
      unlockRequired: null,
      operatorCode: "26201",
      imei: "867962040000001",
      iccid: "8949226000000000001",
      signalQuality: 67,
      bearerAddress: "100.71.20.37/30",
    });
    // The 6.3.1 status: strict, typed, no free text.
    expect(LteStatus.parse(s)).toEqual(s);
    expect(s).not.toHaveProperty("text");
  });

  it("searching, SIM PIN locked, no SIM and disabled modems each read as what they are", () => {
    expect(statusOf("searching")).toMatchObject({
      connected: false,
      modemState: "searching",
      registration: "searching",
      operator: "",
      accessTechnology: "none",
      signal: { rssiDbm: null, rsrpDbm: null, rsrqDb: null, sinrDb: null },
      simStatus: "ready",
    });
    expect(statusOf("sim-pin")).toMatchObject({
      connected: false,
      modemState: "locked",
      simStatus: "locked",
      unlockRequired: "sim-pin",
      registration: "unknown",
      iccid: "8949226000000000001",
    });
    expect(statusOf("no-sim")).toMatchObject({ modemState: "failed", simStatus: "absent", iccid: "", imei: "867962040000001" });
    expect(statusOf("disabled")).toMatchObject({ modemState: "disabled", connected: false, registration: "unknown" });
    for (const state of ["searching", "sim-pin", "no-sim", "disabled", "registered"])
      expect(LteStatus.safeParse(statusOf(state)).success).toBe(true);
  });

  it("an unexpected mmcli answer is a clear driver error, not a crash", () => {
    expect(ModemInfo.safeParse({ modem: { generic: {} } }).success).toBe(false);
  });
});

const lte = (over: Partial<ConfigLte> = {}): ConfigLte => ({
  apn: "internet.lab",
  ipType: "ipv4",
  auth: "pap",
  username: "tern",
  password: "s3cret-pass",
  pin: "1234",
  allowRoaming: false,
  ...over,
});
const wwan = (settings: ConfigLte | undefined): ConfigInterface => ({
  devId: "usb:1-1.3",
  name: "wwan0",
  type: "WAN",
  dhcp: false,
  address: null,
  gateway: null,
  metric: 10,
  mtu: 1500,
  pathLabels: [],
  ...(settings ? { lte: settings } : {}),
});

// Every mmcli call starts a node process (the stand-in): allow for a busy machine.
describe("LTE driver apply with a stand-in mmcli on the PATH", { timeout: 30_000 }, () => {
  let dir: string;
  let stateFile: string;
  let logFile: string;
  let runner: FakeRunner;
  const savedEnv = { ...process.env };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "tern-lte-"));
    stateFile = join(dir, "modem-state");
    logFile = join(dir, "mmcli.log");
    await writeFile(logFile, "");
    process.env.PATH = `${standIn}:${process.env.PATH}`;
    process.env.MMCLI_STAND_IN_FIXTURES = fixtures;
    process.env.MMCLI_STAND_IN_STATE = stateFile;
    process.env.MMCLI_STAND_IN_LOG = logFile;
    const exec = new ExecRunner();
    runner = new FakeRunner({ strict: true })
      .on(["mmcli"], (argv, options) => exec.run(argv, { ...options, allowFailure: true }))
      .on(["ip", "-j", "-4", "addr", "show"], { stdout: "[]" })
      .on(["ip", "link", "set"], {})
      .on(["ip", "addr", "replace"], {});
  });
  afterEach(async () => {
    process.env = { ...savedEnv };
    await rm(dir, { recursive: true, force: true });
  });

  const modemIs = (state: string) => writeFile(stateFile, `${state}\n`);
  const modemState = async () => (await readFile(stateFile, "utf8")).trim();
  /** The mmcli calls that change the modem, space-joined, -J dropped. */
  const actions = async () =>
    (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as string[]).filter((a) => a !== "-J").join(" "))
      .filter((l) => /--pin=|--simple-|-e$|--signal-setup/.test(l));
  const clearLog = () => writeFile(logFile, "");
  const ctxFor = () => driverContext(runner, dir);

  it("unlocks a PIN-locked SIM, turns on signal reporting, connects with the APN and puts the bearer address on the interface; a second apply changes nothing", async () => {
    await modemIs("sim-pin");
    const driver = new LteDriver();
    const ctx = ctxFor();
    const config = configWith({ interfaces: [wwan(lte())] });
    expect(await driver.apply(config, ctx)).toEqual({ changed: true });
    const M = "/org/freedesktop/ModemManager1/Modem/0";
    expect(await actions()).toEqual([
      "-i /org/freedesktop/ModemManager1/SIM/0 --pin=1234",
      `-m ${M} --signal-setup=30`,
      `-m ${M} --simple-connect=apn=internet.lab,ip-type=ipv4,allow-roaming=no,allowed-auth=pap,user=tern,password=s3cret-pass`,
    ]);
    expect(await modemState()).toBe("connected");
    expect(runner.commands()).toContain("ip addr replace 100.71.20.37/30 dev wwan0");

    await clearLog();
    runner.clear();
    runner.on(["ip", "-j", "-4", "addr", "show"], {
      stdout: JSON.stringify([{ ifname: "wwan0", addr_info: [{ family: "inet", local: "100.71.20.37", prefixlen: 30 }] }]),
    });
    expect(await driver.apply(config, ctx)).toEqual({ changed: false });
    expect(await actions()).toEqual([]);
    expect(runner.commands().filter((c) => c.startsWith("ip addr"))).toEqual([]);
  });

  it("a changed APN or password reconnects; an interface without lte any more is disconnected", async () => {
    await modemIs("registered");
    const driver = new LteDriver();
    const ctx = ctxFor();
    await driver.apply(configWith({ interfaces: [wwan(lte())] }), ctx);
    await clearLog();
    await driver.apply(configWith({ interfaces: [wwan(lte({ apn: "iot.lab", password: "other-pass" }))] }), ctx);
    const M = "/org/freedesktop/ModemManager1/Modem/0";
    expect(await actions()).toEqual([
      `-m ${M} --simple-disconnect`,
      `-m ${M} --simple-connect=apn=iot.lab,ip-type=ipv4,allow-roaming=no,allowed-auth=pap,user=tern,password=other-pass`,
    ]);
    await clearLog();
    expect(await driver.apply(configWith({ interfaces: [wwan(undefined)] }), ctx)).toEqual({ changed: true });
    expect(await actions()).toEqual([`-m ${M} --simple-disconnect`]);
    expect(await modemState()).toBe("registered");
  });

  it("a connection the network dropped is noticed between applies and connected again by the reconcile it asks for", async () => {
    await modemIs("registered");
    const driver = new LteDriver();
    const ctx = ctxFor();
    const config = configWith({ interfaces: [wwan(lte())] });
    await driver.apply(config, ctx);
    expect(await driver.heal(config, ctx)).toEqual([]);
    await modemIs("registered"); // the bearer is gone, the modem still registered
    const asked: string[] = [];
    expect(await driver.heal(config, { ...ctx, requestReconcile: (why) => asked.push(why) })).toEqual([
      "lte: wwan0 lost its data connection; reconnecting",
    ]);
    expect(asked).toEqual(["lte: wwan0 disconnected"]);
    await clearLog();
    expect(await driver.apply(config, ctx)).toEqual({ changed: true });
    expect((await actions()).filter((a) => a.includes("--simple-connect="))).toHaveLength(1);
    expect(await modemState()).toBe("connected");
    // A modem without network (searching) is left to the modem: no reconcile storm.
    await modemIs("searching");
    expect(await driver.heal(config, ctx)).toEqual([]);
  });

  it("a disabled modem is enabled before it connects; auth none sends no credentials", async () => {
    await modemIs("disabled");
    await new LteDriver().apply(configWith({ interfaces: [wwan(lte({ auth: "none", username: "", password: "" }))] }), ctxFor());
    const M = "/org/freedesktop/ModemManager1/Modem/0";
    expect(await actions()).toEqual([
      `-m ${M} -e`,
      `-m ${M} --signal-setup=30`,
      `-m ${M} --simple-connect=apn=internet.lab,ip-type=ipv4,allow-roaming=no`,
    ]);
  });

  it("a wrong PIN is refused once and never tried again with the same value; the last try is left to a person", async () => {
    await modemIs("sim-pin");
    const driver = new LteDriver();
    const ctx = ctxFor();
    const config = configWith({ interfaces: [wwan(lte({ pin: "9999" }))] });
    const first = await driver.apply(config, ctx).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(AgentError);
    expect((first as AgentError).code).toBe("INVALID_CONFIG");
    expect((first as AgentError).path).toBe("interfaces.wwan0.lte.pin");
    expect((first as AgentError).message).not.toContain("9999");
    const again = await driver.apply(config, ctx).catch((e: unknown) => e);
    expect((again as AgentError).code).toBe("INVALID_CONFIG");
    expect((await actions()).filter((a) => a.includes("--pin="))).toHaveLength(1);

    await modemIs("sim-pin-last-try");
    await clearLog();
    const last = await new LteDriver().apply(configWith({ interfaces: [wwan(lte())] }), ctx).catch((e: unknown) => e);
    expect((last as AgentError).code).toBe("INVALID_CONFIG");
    expect(await actions()).toEqual([]);

    await modemIs("sim-pin");
    const noPin = await new LteDriver().apply(configWith({ interfaces: [wwan(lte({ pin: "" }))] }), ctx).catch((e: unknown) => e);
    expect((noPin as AgentError).path).toBe("interfaces.wwan0.lte.pin");
  });

  it("no SIM, or no network (connect times out): a driver error that names the cause and never the password", async () => {
    await modemIs("no-sim");
    const noSim = await new LteDriver().apply(configWith({ interfaces: [wwan(lte())] }), ctxFor()).catch((e: unknown) => e);
    expect((noSim as AgentError).code).toBe("DRIVER_FAILED");
    expect(String(noSim)).toContain("no SIM");

    await modemIs("searching");
    const searching = await new LteDriver().apply(configWith({ interfaces: [wwan(lte())] }), ctxFor()).catch((e: unknown) => e);
    expect((searching as AgentError).code).toBe("DRIVER_FAILED");
    expect(String(searching)).toContain("Timeout was reached");
    expect(String(searching)).not.toContain("s3cret-pass");
  });

  it("no modem with that network port: LINK_NOT_FOUND", async () => {
    await modemIs("connected");
    const err = await new LteDriver()
      .apply(configWith({ interfaces: [{ ...wwan(lte()), name: "wwan1" }] }), ctxFor())
      .catch((e: unknown) => e);
    expect((err as AgentError).code).toBe("LINK_NOT_FOUND");
  });

  it("the interface status of an LTE interface carries the modem's state (links driver + LTE reader), others stay null", async () => {
    await modemIs("connected");
    runner
      .on(["ip", "-j", "-s", "addr", "show"], { stdout: "[]" })
      .on(["ip", "-j", "route", "show", "default"], { stdout: "[]" });
    const links = new LinksDriver({ lte: new LteDriver() });
    const lan: ConfigInterface = { ...wwan(undefined), name: "lan0", devId: "mac:02:00:00:00:00:01", type: "LAN" };
    const part = await links.observe(configWith({ interfaces: [wwan(lte()), lan] }), ctxFor());
    const [w, l] = part.interfaces ?? [];
    expect(w?.lte).toMatchObject({ connected: true, operator: "Lab Mobile", registration: "home", signal: { rsrpDbm: -97 } });
    expect(l?.lte).toBeNull();
  });

  it("plan shows the connect without the password", () => {
    const plan = new LteDriver().plan(configWith({ interfaces: [wwan(lte())] }));
    expect(plan.commands.map((c) => c.join(" "))).toEqual([
      "mmcli -m <modem with port wwan0> --simple-connect=apn=internet.lab,ip-type=ipv4,allow-roaming=no,allowed-auth=pap,user=tern,password=<redacted>",
    ]);
  });
});
