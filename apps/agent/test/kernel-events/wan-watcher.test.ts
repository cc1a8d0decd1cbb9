import { afterEach, describe, expect, it } from "vitest";
import { describeWanChange, type WanChange, WanWatcher } from "../../src/kernel-events/index.ts";
import type { SpawnedProcess, Spawner } from "../../src/runner.ts";
import { emptyConfig, fullConfig } from "../support/configs.ts";
import { FakeRunner } from "../support/fake-runner.ts";

/** Stands in for `ip monitor`: the test feeds lines and ends the process. */
class FakeSpawner implements Spawner {
  readonly started: string[][] = [];
  private current: { onLine: (l: string) => void; onExit: (c: number | null) => void } | null = null;
  spawn(argv: string[], onLine: (l: string) => void, onExit: (c: number | null) => void): SpawnedProcess {
    this.started.push(argv);
    this.current = { onLine, onExit };
    return { stop: () => (this.current = null) };
  }
  line(l: string): void {
    this.current?.onLine(l);
  }
  die(): void {
    const c = this.current;
    this.current = null;
    c?.onExit(1);
  }
}

/** `ip -j addr show` of a router whose wan0 and wan1 the test changes. */
function kernel(runner: FakeRunner) {
  const wans: Record<string, { carrier: boolean; address: string | null }> = {
    wan0: { carrier: true, address: "10.100.1.2" },
    wan1: { carrier: true, address: "10.101.1.2" },
  };
  runner.on(["ip", "-j", "addr", "show"], () => ({
    stdout: JSON.stringify(
      Object.entries(wans).map(([ifname, w]) => ({
        ifname,
        flags: w.carrier ? ["BROADCAST", "UP", "LOWER_UP"] : ["NO-CARRIER", "BROADCAST", "UP"],
        operstate: w.carrier ? "UP" : "LOWERLAYERDOWN",
        addr_info: [
          ...(w.address ? [{ family: "inet", local: w.address, prefixlen: 24 }] : []),
          { family: "inet6", local: "fe80::1", prefixlen: 64 },
        ],
      })),
    ),
  }));
  return wans;
}

const until = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe("WAN watcher (fake ip monitor and ip -j)", () => {
  let watcher: WanWatcher | null = null;
  afterEach(() => watcher?.close());

  it("reports a WAN breaking as the event arrives, confirms with one read per burst, and reports returns and address changes", async () => {
    const runner = new FakeRunner();
    const wans = kernel(runner);
    const spawner = new FakeSpawner();
    const seen: WanChange[][] = [];
    watcher = new WanWatcher({ runner, spawner });
    watcher.onChange((c) => void seen.push(c));
    watcher.configure(fullConfig());
    expect(spawner.started).toEqual([["ip", "-o", "monitor", "link", "address", "route"]]);
    await until(() => watcher!.state("wan0") !== null);
    expect(seen).toEqual([]);

    wans.wan0!.carrier = false;
    const reads = runner.commands().length;
    // One carrier loss: the link, then the routes through it, within a millisecond.
    spawner.line("3: wan0@if2: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default");
    spawner.line("10.100.1.0/24 dev wan0 proto kernel scope link src 10.100.1.2 linkdown");
    spawner.line("default via 10.100.1.1 dev wan0 proto 57 metric 10 linkdown");
    await until(() => seen.length === 1);
    // Reported from the event itself, before any read of the kernel.
    expect(runner.commands().length - reads).toBe(0);
    expect(seen[0]!.map(describeWanChange)).toEqual(["wan0 carrier lost"]);
    expect(seen[0]![0]!.seenAt).toBeGreaterThan(0);
    // The burst's one confirming read agrees: nothing more is reported.
    await new Promise((r) => setTimeout(r, 40));
    expect(runner.commands().length - reads).toBe(1);
    expect(seen).toHaveLength(1);

    wans.wan0!.carrier = true;
    spawner.line("3: wan0@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default");
    await until(() => seen.length === 2);
    expect(seen[1]!.map(describeWanChange)).toEqual(["wan0 carrier up"]);

    wans.wan1!.address = "10.101.1.7";
    spawner.line("Deleted 4: wan1    inet 10.101.1.2/24 scope global wan1");
    spawner.line("4: wan1    inet 10.101.1.7/24 scope global wan1");
    // The deletion is acted on at once, the new address once the burst is read.
    await until(() => seen.length === 4);
    expect(seen.slice(2).map((c) => c.map(describeWanChange))).toEqual([
      ["wan1 address 10.101.1.2 removed"],
      ["wan1 address 10.101.1.7 added"],
    ]);

    // A change of the primary while a secondary is promoted: the read corrects the event's guess.
    wans.wan1!.address = "10.101.1.8";
    spawner.line("Deleted 4: wan1    inet 10.101.1.7/24 scope global wan1");
    await until(() => seen.length === 6);
    expect(seen.slice(4).map((c) => c.map(describeWanChange))).toEqual([
      ["wan1 address 10.101.1.7 removed"],
      ["wan1 address 10.101.1.8 added"],
    ]);
  });

  it("ignores events of other interfaces and the agent's own policy routes without reading the kernel", async () => {
    const runner = new FakeRunner();
    kernel(runner);
    const spawner = new FakeSpawner();
    watcher = new WanWatcher({ runner, spawner });
    watcher.configure(fullConfig());
    await until(() => watcher!.state("wan0") !== null);
    const reads = runner.commands().length;
    spawner.line("default via 10.101.1.1 dev wan1 table 30000");
    spawner.line("5: lan0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP");
    spawner.line("garbage that is no event");
    await new Promise((r) => setTimeout(r, 40));
    expect(runner.commands().length).toBe(reads);
  });

  it("starts ip monitor again when it dies and reads the state, a handler that throws does not stop it", async () => {
    const runner = new FakeRunner();
    const wans = kernel(runner);
    const spawner = new FakeSpawner();
    const seen: string[] = [];
    watcher = new WanWatcher({ runner, spawner });
    watcher.onChange(() => {
      throw new Error("handler bug");
    });
    watcher.onChange((c) => void seen.push(...c.map(describeWanChange)));
    watcher.configure(fullConfig());
    await until(() => watcher!.state("wan0") !== null);
    // The carrier goes while no monitor runs: the restart's resync read finds it.
    wans.wan0!.carrier = false;
    spawner.die();
    await until(() => spawner.started.length === 2);
    expect(watcher.monitorRestarts).toBe(1);
    await until(() => seen.length === 1);
    expect(seen).toEqual(["wan0 carrier lost"]);
  });

  it("reports a WAN that is unusable at its first reading; a config without WANs reads nothing", async () => {
    const runner = new FakeRunner();
    const wans = kernel(runner);
    wans.wan1!.address = null;
    const spawner = new FakeSpawner();
    const seen: string[] = [];
    watcher = new WanWatcher({ runner, spawner });
    watcher.onChange((c) => void seen.push(...c.map(describeWanChange)));
    watcher.configure(fullConfig());
    await until(() => seen.length === 1);
    expect(seen).toEqual(["wan1 has carrier, no address"]);

    const other = new WanWatcher({ runner: new FakeRunner({ strict: true }), spawner: new FakeSpawner() });
    other.configure(emptyConfig());
    await new Promise((r) => setTimeout(r, 20));
    expect(other.state("wan0")).toBeNull();
    other.close();
  });
});

describe("WAN state from ip -j addr show", () => {
  it("reads carrier from flags and operstate, the primary IPv4 address, and a missing WAN as down", async () => {
    const { parseWanStates } = await import("../../src/kernel-events/index.ts");
    const json = JSON.stringify([
      {
        ifname: "wan0",
        flags: ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
        operstate: "UP",
        addr_info: [
          { family: "inet", local: "10.0.0.9", prefixlen: 24, secondary: true },
          { family: "inet", local: "10.0.0.2", prefixlen: 24 },
        ],
      },
      { ifname: "wan1", flags: ["BROADCAST", "MULTICAST", "UP"], operstate: "LOWERLAYERDOWN", addr_info: [] },
      { ifname: "wan2", flags: ["BROADCAST", "MULTICAST"], operstate: "DOWN", addr_info: [] },
      // A veth whose peer went: admin up, UNKNOWN operstate would count, NO-CARRIER does not.
      { ifname: "wan3", flags: ["NO-CARRIER", "UP"], operstate: "UNKNOWN" },
    ]);
    const s = parseWanStates(json, ["wan0", "wan1", "wan2", "wan3", "wan4"]);
    expect([...s.values()]).toEqual([
      { ifname: "wan0", carrier: true, address: "10.0.0.2" },
      { ifname: "wan1", carrier: false, address: null },
      { ifname: "wan2", carrier: false, address: null },
      { ifname: "wan3", carrier: false, address: null },
      { ifname: "wan4", carrier: false, address: null },
    ]);
  });
});
