/** Registration discovers modem ports (raw IP, no MAC) as lte interfaces and wireless NICs as wifi. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverInterfaces } from "../../src/identity/discover.ts";
import { FakeRunner } from "../support/fake-runner.ts";

const link = (ifname: string, link_type: string, address?: string) => ({
  ifindex: 1,
  ifname,
  flags: ["UP"],
  mtu: 1500,
  operstate: "UP",
  link_type,
  ...(address ? { address } : {}),
  addr_info: [],
});

describe("interface discovery", () => {
  let sys: string;
  beforeEach(async () => {
    sys = await mkdtemp(join(tmpdir(), "tern-sysnet-"));
  });
  afterEach(() => rm(sys, { recursive: true, force: true }));

  it("reports a raw-IP modem port as lte with its bus position as devId, a wireless NIC as wifi, and skips other MAC-less links", async () => {
    for (const n of ["eth0", "wlan0", "wwan0", "tun0"]) await mkdir(join(sys, n));
    await writeFile(join(sys, "wwan0/uevent"), "DEVTYPE=wwan\nINTERFACE=wwan0\nIFINDEX=5\n");
    await symlink("../../../1-1.3:1.4", join(sys, "wwan0/device"));
    await mkdir(join(sys, "wlan0/wireless"));
    await writeFile(join(sys, "wlan0/uevent"), "DEVTYPE=wlan\nINTERFACE=wlan0\n");
    const runner = new FakeRunner()
      .on(["ip", "-j", "-s", "addr", "show"], {
        stdout: JSON.stringify([
          link("eth0", "ether", "02:00:00:00:00:01"),
          link("wlan0", "ether", "02:00:00:00:0E:01"),
          link("wwan0", "none"),
          link("tun0", "none"),
        ]),
      })
      .on(["ip", "-j", "route", "show", "default"], { stdout: "[]" });
    const found = await discoverInterfaces(runner, sys);
    expect(found.map((i) => [i.name, i.deviceType, i.devId, i.mac])).toEqual([
      ["eth0", "ethernet", "mac:02:00:00:00:00:01", "02:00:00:00:00:01"],
      ["wlan0", "wifi", "mac:02:00:00:00:0e:01", "02:00:00:00:0e:01"],
      ["wwan0", "lte", "wwan:1-1.3:1.4", ""],
    ]);
  });
});
