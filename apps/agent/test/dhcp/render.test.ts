/** Golden kea-dhcp4 config from the protocol's full sample, lease-time rules and validation. */
import type { ConfigDhcpServer } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { configuredAddresses, DhcpDriver } from "../../src/drivers/dhcp/driver.ts";
import { dhcpPaths } from "../../src/drivers/dhcp/paths.ts";
import { minLeaseTime, renderKeaConf, subnetId, validateDhcp } from "../../src/drivers/dhcp/render.ts";
import { fullConfig } from "../support/configs.ts";

const full = fullConfig();
const paths = dhcpPaths("standalone", "/run/tern");

describe("dhcp render (golden)", () => {
  it("standalone kea-dhcp4.conf for the sample", async () => {
    await expect(renderKeaConf(full.dhcp, configuredAddresses(full), paths)).toMatchFileSnapshot("./golden/kea-dhcp4.conf");
  });

  it("system kea-dhcp4.conf uses the distro's paths", async () => {
    await expect(renderKeaConf(full.dhcp, configuredAddresses(full), dhcpPaths("system", "/run/tern"))).toMatchFileSnapshot(
      "./golden/kea-dhcp4.system.conf",
    );
  });

  it("the interface's address is part of the config, so an address change changes it", () => {
    const a = JSON.parse(renderKeaConf(full.dhcp, new Map([["lan0", "192.168.50.2/24"]]), paths));
    const b = JSON.parse(renderKeaConf(full.dhcp, new Map([["lan0", "192.168.50.3/24"]]), paths));
    expect(a.Dhcp4["interfaces-config"].interfaces).toEqual(["lan0/192.168.50.2"]);
    expect(b.Dhcp4["interfaces-config"].interfaces).toEqual(["lan0/192.168.50.3"]);
    expect(JSON.parse(renderKeaConf(full.dhcp, new Map(), paths)).Dhcp4["interfaces-config"].interfaces).toEqual(["lan0"]);
  });

  it("lease times: valid = default, max = max, min = a quarter of the default (at least 60 s)", () => {
    const sub = JSON.parse(renderKeaConf(full.dhcp, new Map(), paths)).Dhcp4.subnet4[0];
    expect(sub).toMatchObject({ "valid-lifetime": 3600, "max-valid-lifetime": 7200, "min-valid-lifetime": 900 });
    expect([60, 100, 240, 3600].map((d) => minLeaseTime({ defaultLeaseTime: d }))).toEqual([60, 60, 60, 900]);
  });

  it("options by code: routers defaults to the interface, DNS from the list, host name only when asked", () => {
    const s: ConfigDhcpServer = {
      ...full.dhcp[0]!,
      options: [{ code: 15, name: "domain-name", value: "a,b.example" }],
      reservations: [
        { host: "printer", mac: "02:00:00:00:0B:01", ipv4: "192.168.50.20", sendHostName: true },
        { host: "nas", mac: "02:00:00:00:0b:02", ipv4: "192.168.50.21", sendHostName: false },
      ],
    };
    const sub = JSON.parse(renderKeaConf([s], new Map([["lan0", "192.168.50.2/24"]]), paths)).Dhcp4.subnet4[0];
    expect(sub["option-data"]).toEqual([
      { code: 3, data: "192.168.50.2" },
      { code: 6, data: "192.168.50.1" },
      { code: 15, data: "a\\,b.example" },
    ]);
    expect(sub.reservations).toEqual([
      {
        "hw-address": "02:00:00:00:0b:01",
        "ip-address": "192.168.50.20",
        hostname: "printer",
        "option-data": [{ code: 12, data: "printer", "always-send": true }],
        "user-context": { host: "printer" },
      },
      { "hw-address": "02:00:00:00:0b:02", "ip-address": "192.168.50.21", "user-context": { host: "nas" } },
    ]);
  });

  it("subnet ids come from the network, so they are stable and differ per subnet", () => {
    expect(subnetId("192.168.50.0/24")).toBe(3232248321);
    expect(subnetId("192.168.60.0/24")).not.toBe(subnetId("192.168.50.0/24"));
    expect(subnetId("0.0.0.0/0")).toBe(1);
  });

  it("plans a config check and the start", () => {
    const plan = new DhcpDriver().plan(full, { mode: "standalone", runDir: "/run/tern", stateDir: "/var/lib/tern" });
    expect(plan.files.map((f) => f.path)).toEqual(["kea-dhcp4.conf"]);
    expect(plan.commands.map((c) => c.join(" "))).toEqual([
      "/usr/sbin/kea-dhcp4 -t /run/tern/dhcp/kea-dhcp4.conf",
      "start-stop-daemon --start --background --pidfile /run/tern/dhcp/kea-dhcp4.kea-dhcp4.pid --output /run/tern/dhcp/kea-dhcp4.out --exec /usr/sbin/kea-dhcp4 -- -c /run/tern/dhcp/kea-dhcp4.conf",
    ]);
  });
});

describe("dhcp validation", () => {
  const check = (servers: ConfigDhcpServer[], path: string, addr: string | null = "192.168.50.2/24") => {
    try {
      validateDhcp(servers, new Map([["lan0", addr]]));
      throw new Error("accepted");
    } catch (e) {
      expect(e).toMatchObject({ code: "INVALID_CONFIG", path });
    }
  };
  const s = full.dhcp[0]!;
  it("refuses bad input with INVALID_CONFIG and a path", () => {
    check([{ ...s, maxLeaseTime: 600 }], "dhcp.0.maxLeaseTime");
    check([{ ...s, rangeStart: "192.168.51.10" }], "dhcp.0.rangeStart");
    check([{ ...s, rangeStart: "192.168.50.200" }], "dhcp.0.rangeEnd");
    check([s], "dhcp.0.subnet", "192.168.60.1/24");
    check([s, s], "dhcp.1.interface");
    check([{ ...s, reservations: [{ ...s.reservations[0]!, ipv4: "10.0.0.1" }] }], "dhcp.0.reservations.0.ipv4");
    check([{ ...s, reservations: [{ ...s.reservations[0]!, mac: "02:00:00:00:0b" }] }], "dhcp.0.reservations.0.mac");
    check(
      [{ ...s, reservations: [s.reservations[0]!, { ...s.reservations[0]!, ipv4: "192.168.50.21" }] }],
      "dhcp.0.reservations.1.mac",
    );
    check([{ ...s, options: [{ code: 66, name: "tftp", value: " " }] }], "dhcp.0.options.0.value");
    expect(() => validateDhcp([s], new Map([["lan0", null]]))).not.toThrow();
  });
});
