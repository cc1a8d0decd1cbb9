/** A tiny model of `ip rule` and `ip route … table N` for the fake runner. */
import type { FakeRunner } from "./fake-runner.ts";

interface Rule {
  priority: number;
  fwmark?: string;
  fwmask?: string;
  table: string;
}
interface Route {
  type?: string;
  dst: string;
  gateway?: string;
  dev?: string;
}

export class FakeIp {
  readonly rules: Rule[] = [
    { priority: 0, table: "local" },
    { priority: 220, fwmark: "0x4242", fwmask: "0xffffffff", table: "220" },
    { priority: 32766, table: "main" },
  ];
  readonly tables = new Map<number, Route[]>();

  constructor(runner: FakeRunner) {
    runner.on(["ip", "-j", "-4", "rule", "show"], () => ({
      stdout: JSON.stringify([...this.rules].sort((a, b) => a.priority - b.priority).map((r) => ({ src: "all", ...r }))),
    }));
    runner.on(["ip", "-4", "rule", "add"], (argv) => {
      const [mark, mask] = argv[7]!.split("/");
      this.rules.push({ priority: Number(argv[5]), fwmark: mark!, fwmask: mask!, table: argv[9]! });
      return {};
    });
    runner.on(["ip", "-4", "rule", "del"], (argv) => {
      const i = this.rules.findIndex((r) => r.priority === Number(argv[5]));
      if (i < 0) return { exitCode: 2, stderr: "RTNETLINK answers: No such file or directory" };
      this.rules.splice(i, 1);
      return {};
    });
    runner.on(["ip", "-j", "-4", "route", "show", "table"], (argv) => {
      const routes = this.tables.get(Number(argv[6])) ?? [];
      return routes.length
        ? { stdout: JSON.stringify(routes) }
        : { exitCode: 2, stdout: "[", stderr: "Error: ipv4: FIB table does not exist." };
    });
    runner.on(["ip", "-4", "route", "flush", "table"], (argv) => {
      this.tables.delete(Number(argv[5]));
      return {};
    });
    runner.on(["ip", "route", "replace"], (argv) => {
      const table = Number(argv[argv.indexOf("table") + 1]);
      if (argv[3] === "blackhole") this.tables.set(table, [{ type: "blackhole", dst: "default" }]);
      else {
        const dev = argv.includes("dev") ? argv[argv.indexOf("dev") + 1]! : "tun-resolved";
        this.tables.set(table, [{ dst: "default", gateway: argv[5]!, dev }]);
      }
      return {};
    });
  }

  /** Owned rules as "priority mark/mask table" lines. */
  ownedRules(): string[] {
    return this.rules
      .filter((r) => r.priority >= 30000 && r.priority < 30255)
      .map((r) => `${r.priority} ${r.fwmark}/${r.fwmask} ${r.table}`);
  }

  /** The default route of `table` as text. */
  route(table: number): string | null {
    const r = this.tables.get(table)?.[0];
    if (!r) return null;
    return r.type === "blackhole" ? "blackhole" : `via ${r.gateway} dev ${r.dev}`;
  }
}
