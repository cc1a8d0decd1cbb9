/**
 * A DHCP WAN whose address changes (issue 17, "react to the kernel"): the
 * device reports the new address in a status; the server stores it and
 * re-configures the far ends of the device's tunnels, one job per far device
 * after a short debounce, and none when nothing a far end uses changed.
 * Simulated devices over real websockets; the far device's applied hash is
 * compared with the desired config, so the apply it took named the new address.
 */
import type { DeviceInterface } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { readDesiredConfig } from "../../src/services/desired-config-seal.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";

const DEBOUNCE_MS = 150;
const g = useGatewayServer({ TERN_WAN_ADDRESS_DEBOUNCE_MS: String(DEBOUNCE_MS), TERN_INGEST_FLUSH_MS: "200" });

const wan = async (d: SimRow): Promise<DeviceInterface> => {
  const row = await g.database.db.selectFrom("devices").select("interfaces").where("id", "=", d.id).executeTakeFirstOrThrow();
  return row.interfaces.find((i) => i.id === d.wanId)!;
};

async function jobsOf(ids: string[]) {
  return g.database.db
    .selectFrom("jobs")
    .select(["id", "device_id", "tasks", "state", "target_hash"])
    .where("device_id", "in", ids)
    .orderBy("created_at")
    .execute();
}

/** Device 0 (WAN on DHCP when `dhcp`) with tunnels to devices 1 and 2; everything applied. */
async function star(dhcp: boolean) {
  // Connected only once the WAN is on DHCP: the gateway reads the device's interfaces at the hello.
  const { fleet, devices } = await g.fleet(3, { statusIntervalMs: 3_600_000, connect: false });
  const [hub, far1, far2] = devices as [SimRow, SimRow, SimRow];
  if (dhcp) {
    const interfaces = (
      await g.database.db.selectFrom("devices").select("interfaces").where("id", "=", hub.id).executeTakeFirstOrThrow()
    ).interfaces.map((i) => (i.id === hub.wanId ? { ...i, dhcp: true } : i));
    await g.database.db
      .updateTable("devices")
      .set({ interfaces: toJson(interfaces) })
      .where("id", "=", hub.id)
      .execute();
  }
  await fleet.connectAll();
  const jobIds = [...(await g.tunnel(hub, far1)).jobIds, ...(await g.tunnel(hub, far2)).jobIds];
  await g.waitForJobs(jobIds, "complete");
  return { fleet, hub, far1, far2, ids: devices.map((d) => d.id) };
}

/** The remote address each far device's desired config names for its tunnel to the hub. */
async function remoteAddresses(farIds: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of farIds) {
    const config = await readDesiredConfig(g.database.db, g.server.deps.keyring, id);
    out.push(config!.tunnels.map((t) => t.remoteAddress).join(","));
  }
  return out;
}

describe("a DHCP WAN's new address", () => {
  it("re-configures each far end once (debounced), with the new address, and nothing when unchanged", async () => {
    const { fleet, hub, far1, far2, ids } = await star(true);
    const sim = fleet.device(0);
    const before = (await jobsOf(ids)).length;
    const old = (await wan(hub)).IPv4;
    expect(await remoteAddresses([far1.id, far2.id])).toEqual([old, old]);

    // Two leases in quick succession (within the debounce): one round of jobs, for the last address.
    sim.setWanAddress({ IPv4: "192.0.2.50", IPv4Mask: 24 });
    expect(sim.sendStatus()).toBe(true);
    sim.setWanAddress({ IPv4: "192.0.2.51", IPv4Mask: 24 });
    const reportedAt = performance.now();
    expect(sim.sendStatus()).toBe(true);
    await waitUntil(
      () => wan(hub),
      (w) => w.IPv4 === "192.0.2.51",
    );
    expect((await wan(hub)).IPv4Mask).toBe(24);
    const jobs = (await jobsOf(ids)).slice(before);
    // One job per far device (and one for the hub, whose own tunnels' localAddress changed).
    expect(jobs.map((j) => j.device_id).sort()).toEqual([hub.id, far1.id, far2.id].sort());
    for (const j of jobs) expect(j.tasks[0]).toMatchObject({ kind: "wan-address" });
    await g.waitForJobs(
      jobs.map((j) => j.id),
      "complete",
    );
    const appliedMs = performance.now() - reportedAt;
    console.log(`wan address: report → both far ends applied in ${appliedMs.toFixed(0)} ms (debounce ${DEBOUNCE_MS} ms)`);
    expect(await remoteAddresses([far1.id, far2.id])).toEqual(["192.0.2.51", "192.0.2.51"]);
    // The far devices applied exactly that config.
    for (const [i, far] of [far1, far2].entries()) {
      const job = jobs.find((j) => j.device_id === far.id)!;
      expect(fleet.device(i + 1).appliedHash).toBe(job.target_hash);
    }

    // The same address again, and a lost lease (no address): no database work, no job.
    const settled = (await jobsOf(ids)).length;
    sim.sendStatus();
    sim.setWanAddress({ IPv4: "", IPv4Mask: null });
    sim.sendStatus();
    await new Promise((r) => setTimeout(r, DEBOUNCE_MS * 4 + 300));
    expect((await jobsOf(ids)).length).toBe(settled);
    expect((await wan(hub)).IPv4).toBe("192.0.2.51");
  });

  it("leaves a static WAN's configured address alone (the agent puts it back)", async () => {
    const { fleet, hub, far1, far2, ids } = await star(false);
    const sim = fleet.device(0);
    const before = (await jobsOf(ids)).length;
    const configured = (await wan(hub)).IPv4;
    sim.setWanAddress({ IPv4: "192.0.2.60", IPv4Mask: 24 });
    sim.sendStatus();
    await new Promise((r) => setTimeout(r, DEBOUNCE_MS * 4 + 300));
    expect((await jobsOf(ids)).length).toBe(before);
    expect((await wan(hub)).IPv4).toBe(configured);
    expect(await remoteAddresses([far1.id, far2.id])).toEqual([configured, configured]);
  });
});
