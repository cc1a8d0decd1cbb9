import type { DeviceSummary, TunnelSummary } from "@tern/client";
import { describe, expect, it } from "vitest";
import { layoutMesh, type Positions } from "./layout.ts";
import { buildMesh, chooseDevices, topologyKey } from "./mesh.ts";

const device = (id: string, isApproved = true, isConnected = true) =>
  ({ id, name: `dev-${id}`, isApproved, isConnected }) as DeviceSummary;
let num = 0;
const tunnel = (a: string, b: string, status: TunnelSummary["status"] = "Connected") =>
  ({
    id: `t-${a}-${b}`,
    num: num++,
    deviceA: { id: a, name: `dev-${a}` },
    deviceB: { id: b, name: `dev-${b}` },
    peer: null,
    status,
  }) as TunnelSummary;

describe("the mesh graph's model", () => {
  it("has every device as a node with its state and every tunnel as an edge with its status", () => {
    const mesh = buildMesh(
      [device("1"), device("2", true, false), device("3", false, false)],
      [tunnel("1", "2", "Not Connected"), tunnel("1", "3", "Pending")],
    );
    expect(mesh.nodes.map((n) => [n.id, n.state, n.degree])).toEqual([
      ["1", "online", 2],
      ["2", "offline", 1],
      ["3", "pending", 1],
    ]);
    expect(mesh.edges.map((e) => [e.source, e.target, e.status])).toEqual([
      ["1", "2", "Not Connected"],
      ["1", "3", "Pending"],
    ]);
    expect(mesh.hidden).toBe(0);
  });

  it("draws a peer (a tunnel to a non-Tern end) as a node of its own, once", () => {
    const toPeer = (id: string) =>
      ({
        ...tunnel("1", "x"),
        id,
        deviceB: null,
        peer: { id: "p", name: "hq-firewall", remoteIP: "192.0.2.1" },
      }) as TunnelSummary;
    const mesh = buildMesh(
      [device("1"), device("2")],
      [toPeer("t1"), { ...toPeer("t2"), deviceA: { id: "2", name: "dev-2" } } as TunnelSummary],
    );
    expect(mesh.nodes.filter((n) => n.state === "peer")).toEqual([
      { id: "peer:p", name: "hq-firewall", state: "peer", degree: 2 },
    ]);
    expect(mesh.edges.map((e) => e.target)).toEqual(["peer:p", "peer:p"]);
  });

  it("caps a large fleet: devices with a troubled tunnel first, then offline ones, then the most connected", () => {
    const devices = Array.from({ length: 1000 }, (_, i) => device(String(i), true, i !== 500));
    const tunnels = [
      tunnel("900", "901", "Not Connected"),
      // A hub: the most connected healthy device.
      ...Array.from({ length: 5 }, (_, i) => tunnel("10", String(20 + i))),
    ];
    const mesh = buildMesh(devices, tunnels, 5);
    expect(mesh.nodes.map((n) => n.id)).toEqual(["900", "901", "500", "10", "20"]);
    expect(mesh.hidden).toBe(995);
    expect(mesh.totalNodes).toBe(1000);
    // Only tunnels between drawn nodes are drawn; the others are counted.
    expect(mesh.edges.map((e) => `${e.source}-${e.target}`)).toEqual(["900-901", "10-20"]);
    expect(mesh.hiddenEdges).toBe(4);
  });

  it("chooses the devices to draw from the troubled tunnels alone, and counts the fleet it was not given", () => {
    const devices = Array.from({ length: 1000 }, (_, i) => device(String(i), true, i !== 500 && i !== 7));
    const troubled = [tunnel("900", "901", "Not Connected"), tunnel("902", "903", "N/A")];
    const chosen = chooseDevices(devices, troubled, 5);
    // Troubled ends, then offline ones (7, 500), then the others in the list's order; N/A is no trouble.
    expect(chosen.map((d) => d.id)).toEqual(["900", "901", "7", "500", "0"]);
    expect(chooseDevices(devices.slice(0, 3), troubled, 5)).toHaveLength(3);
    const mesh = buildMesh(chosen, [tunnel("900", "901", "Not Connected"), tunnel("0", "42")], 5, {
      devices: 1000,
      tunnels: 2000,
    });
    expect(mesh.edges.map((e) => `${e.source}-${e.target}`)).toEqual(["900-901"]);
    // Device 0's tunnel to 42 (not drawn) still counts in its degree.
    expect(mesh.nodes.find((n) => n.id === "0")?.degree).toBe(1);
    expect(mesh.totalNodes).toBe(1000);
    expect(mesh.hidden).toBe(995);
    expect(mesh.hiddenEdges).toBe(1999);
  });

  it("keeps its topology key when only states change, so the layout is not re-run", () => {
    const a = buildMesh([device("1"), device("2")], [tunnel("1", "2", "Connected")]);
    const b = buildMesh([device("1", true, false), device("2")], [{ ...tunnel("1", "2", "Not Connected"), id: "t-1-2" }]);
    expect(topologyKey(b)).toBe(topologyKey(a));
    const c = buildMesh([device("1"), device("2"), device("3")], [tunnel("1", "2")]);
    expect(topologyKey(c)).not.toBe(topologyKey(a));
  });
});

describe("the mesh layout", () => {
  it("places every node apart, in slices, and keeps placed nodes near where they were", async () => {
    const devices = Array.from({ length: 40 }, (_, i) => device(String(i)));
    const tunnels = Array.from({ length: 39 }, (_, i) => tunnel(String(i), String(i + 1)));
    const mesh = buildMesh(devices, tunnels);
    const run = (previous: Positions) =>
      new Promise<{ positions: Positions; slices: number }>((resolve) => {
        let slices = 0;
        layoutMesh(mesh, previous, (positions, done) => {
          slices++;
          if (done) resolve({ positions, slices });
        });
      });
    const first = await run(new Map());
    expect(first.positions.size).toBe(40);
    const points = [...first.positions.values()];
    const closest = Math.min(...points.flatMap((p, i) => points.slice(i + 1).map((q) => Math.hypot(p.x - q.x, p.y - q.y))));
    expect(closest).toBeGreaterThan(5);
    // Again from the settled positions (as after a live change): a warm start moves nodes little for the drawing's size.
    const second = await run(first.positions);
    const moved = Math.max(
      ...[...second.positions].map(([id, p]) => Math.hypot(p.x - first.positions.get(id)!.x, p.y - first.positions.get(id)!.y)),
    );
    const xs = points.map((p) => p.x);
    const span = Math.max(...xs) - Math.min(...xs);
    expect(moved).toBeLessThan(span / 5);
  });
});
