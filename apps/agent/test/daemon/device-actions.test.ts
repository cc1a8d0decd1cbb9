/**
 * The agent's side of remote actions (`device-action` requests): the running
 * agent (every driver, on a fake router) talks to a fake control server over
 * a real websocket. `stop` takes the data plane down (tunnel, routing, DHCP
 * and VRRP daemons) while the link, addresses and firewall stay, refuses
 * configs, and stays stopped across a restart; `start` applies the last good
 * config again; `reset` forgets it and tears everything down after the
 * answer; `restart-agent` answers, then asks its supervisor for a restart.
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import { configHash, type DeviceActionResult, type Status } from "@tern/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Harness, startAgent } from "../support/agent-harness.ts";
import { fullConfig } from "../support/configs.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeControlServer } from "../support/fake-control-server.ts";
import { FakeSystem } from "../support/fake-system.ts";

const DATA_PLANE_DAEMONS = ["charon-systemd", "zebra", "bgpd", "keepalived", "kea-dhcp4"];
const full = fullConfig();

function router(): FakeSystem {
  return new FakeSystem([
    { name: "wan0", mac: "02:00:00:00:0a:01" },
    { name: "wan1", mac: "02:00:00:00:0a:03" },
    { name: "lan0", mac: "02:00:00:00:0a:02" },
  ]);
}

const running = (sys: FakeSystem) => DATA_PLANE_DAEMONS.map((d) => sys.processes.pids(d).length);
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("device actions on the agent", () => {
  let server: FakeControlServer | null = null;
  let h: Harness | null = null;
  /** A test's own state and run directories, removed once its agent stopped (a running agent writes to them). */
  let own: TempDirs | null = null;
  afterEach(async () => {
    await h?.stop();
    await server?.stop();
    await own?.remove();
    h = null;
    server = null;
    own = null;
  });

  async function configured(overrides: Parameters<typeof startAgent>[1] = {}): Promise<Harness> {
    server = await FakeControlServer.start();
    h = await startAgent(server, { sys: router(), ...overrides });
    await server.waitFor("hello");
    const applied = await server.apply(full);
    expect(applied.ok, applied.error).toBe(true);
    expect(running(h.sys)).toEqual([1, 1, 1, 1, 1]);
    return h;
  }

  const act = async (action: string) => {
    const res = await server!.request("device-action", { action });
    return { ...res, result: res.result as DeviceActionResult };
  };

  it("stop takes the data plane down and keeps it down (configs refused, across a restart); start brings it back", async () => {
    own = await tempDirs("actions-stop");
    const { sys, dirs } = await configured({ dirs: own });
    const addresses = () => sys.kernel.links.flatMap((l) => l.addresses);
    const interfaceAddresses = addresses().filter((a) => !a.endsWith("/32"));
    expect(interfaceAddresses.length).toBeGreaterThan(0);
    const stopped = await act("stop");
    expect(stopped.ok, stopped.error).toBe(true);
    expect(stopped.result).toMatchObject({ action: "stop", dataPlane: "stopped" });
    expect(running(sys)).toEqual([0, 0, 0, 0, 0]);
    // The router stays reachable: interface addresses and the agent's firewall table are kept; the
    // tunnels' loopback addresses went with the tunnels.
    expect(addresses()).toEqual(interfaceAddresses);
    expect(sys.nft.tables.has("inet tern")).toBe(true);
    // The status says so; the applied hash is still the last good config's.
    const status = (await server!.waitFor("status", (m) => (m as Status).dataPlane === "stopped")) as Status;
    expect(status.appliedHash).toBe(configHash(full));

    const refused = await server!.apply(full, { id: "while-stopped" });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/^DATA_PLANE_STOPPED/);
    expect(running(sys)).toEqual([0, 0, 0, 0, 0]);

    // A restart of the agent keeps the data plane stopped.
    await h!.stop();
    h = await startAgent(server, { sys, dirs });
    expect(h.agent.reconciler.dataPlane).toBe("stopped");
    expect(running(sys)).toEqual([0, 0, 0, 0, 0]);
    await server!.waitFor("hello", (m) => m !== server!.messages("hello")[0]);

    const started = await act("start");
    expect(started.ok, started.error).toBe(true);
    expect(started.result).toMatchObject({ action: "start", dataPlane: "running" });
    expect(started.result.message).toContain(configHash(full));
    expect(running(sys)).toEqual([1, 1, 1, 1, 1]);
    expect((await server!.apply(full, { id: "after-start" })).ok).toBe(true);
  });

  it("reset forgets the config and tears everything down after answering; a restart restores nothing", async () => {
    const dirs = await tempDirs("actions-reset");
    own = dirs;
    const { sys } = await configured({ dirs });
    const reset = await act("reset");
    expect(reset.ok, reset.error).toBe(true);
    expect(reset.result).toMatchObject({ action: "reset", dataPlane: "running" });
    expect(running(sys)).toEqual([0, 0, 0, 0, 0]);
    expect(await exists(join(dirs.stateDir, "applied.json"))).toBe(false);
    expect(h!.agent.reconciler.appliedHash).toBeNull();
    // Then the rest: addresses, owned routes, nft tables.
    await vi.waitFor(
      () => {
        expect(sys.kernel.links.flatMap((l) => l.addresses)).toEqual([]);
        expect([...sys.nft.tables.keys()]).toEqual([]);
        expect(sys.kernel.routes).toEqual([]);
      },
      { timeout: 5000, interval: 50 },
    );
    await h!.stop();
    h = await startAgent(server, { sys, dirs });
    expect(h.agent.reconciler.current).toBeNull();
    expect(sys.kernel.links.flatMap((l) => l.addresses)).toEqual([]);
  });

  it("restart-agent answers, then asks the supervisor; without one it is refused", async () => {
    const restart = vi.fn();
    await configured({ onRestart: restart });
    const res = await act("restart-agent");
    expect(res.ok, res.error).toBe(true);
    expect(res.result).toMatchObject({ action: "restart-agent", dataPlane: "running" });
    await vi.waitFor(() => expect(restart).toHaveBeenCalledTimes(1), { timeout: 2000, interval: 20 });
    // The router keeps running while the agent restarts.
    expect(running(h!.sys)).toEqual([1, 1, 1, 1, 1]);

    await h!.stop();
    await server!.stop();
    await configured();
    const refused = await act("restart-agent");
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/INVALID_REQUEST.*supervisor/);
  });

  it("refuses an action it does not know", async () => {
    await configured();
    const res = await act("reboot");
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/INVALID_REQUEST/);
    expect(running(h!.sys)).toEqual([1, 1, 1, 1, 1]);
  });
});
