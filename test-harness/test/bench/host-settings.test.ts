/** The bench applies the server package's kernel settings for its run and puts them back (src/bench/host-settings.ts). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { applyPackageSettings, parseSysctlConf } from "../../src/bench/host-settings.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

/** A stand-in for /proc/sys with these values (the test does not touch the host's kernel). */
function fakeProcSys(values: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), "tern-procsys-"));
  for (const [key, value] of Object.entries(values)) {
    const parts = key.split(".");
    mkdirSync(join(dir, ...parts.slice(0, -1)), { recursive: true });
    writeFileSync(join(dir, ...parts), `${value}\n`);
  }
  return dir;
}
const settingIn = (procSys: string, key: string) => readFileSync(join(procSys, ...key.split(".")), "utf8").trim();

describe("the server package's kernel settings in a bench run", () => {
  it("reads the package's sysctl.conf: the accept queue settings, comments left out", () => {
    expect(parseSysctlConf(readFileSync(join(REPO, "packaging/tern-server/sysctl.conf"), "utf8"))).toEqual([
      { key: "net.core.somaxconn", value: "16384" },
      { key: "net.ipv4.tcp_max_syn_backlog", value: "16384" },
    ]);
    expect(parseSysctlConf("# a = 1\n a.b = 2 # why\n\nc.d=3=4\n")).toEqual([
      { key: "a.b", value: "2" },
      { key: "c.d", value: "3=4" },
    ]);
  });

  it("raises what the host has lower, keeps what it has higher, and puts back what it raised", () => {
    const procSys = fakeProcSys({ "net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "65536" });
    const host = applyPackageSettings(REPO, procSys);
    expect(host.settings).toEqual([
      { key: "net.core.somaxconn", value: "16384", raisedFrom: "4096" },
      { key: "net.ipv4.tcp_max_syn_backlog", value: "65536" },
    ]);
    expect(settingIn(procSys, "net.core.somaxconn")).toBe("16384");
    host.restore();
    expect(settingIn(procSys, "net.core.somaxconn")).toBe("4096");
    expect(settingIn(procSys, "net.ipv4.tcp_max_syn_backlog")).toBe("65536");
  });

  it("leaves out a setting the host does not have", () => {
    const procSys = fakeProcSys({ "net.core.somaxconn": "16384" });
    expect(applyPackageSettings(REPO, procSys).settings).toEqual([{ key: "net.core.somaxconn", value: "16384" }]);
  });
});
