/** The seam for the management server and agents: their command lines and the readiness wait. */
import { createServer } from "node:http";
import { DeviceInterface } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  agentCommand,
  agentSpec,
  describeControl,
  interfaceAssignment,
  planControl,
  RESPAWN_SCRIPT,
  registerArgv,
  staticRoutes,
  waitForHttp,
} from "../src/lab/control/index.ts";
import { planLab } from "../src/plan/address-plan.ts";
import { Topology } from "../src/topology/index.ts";

const topology = (control = {}) =>
  planLab(
    Topology.parse({
      name: "ctl",
      clouds: [{ name: "inet" }],
      edges: [
        { name: "site-a", wan: [{ cloud: "inet" }] },
        { name: "site-b", wan: [{ cloud: "inet" }] },
      ],
      control,
    }),
  ).plan!;

const input = (plan = topology()) => ({
  plan,
  labId: "abc123",
  labDir: "/srv/lab/ctl",
  repoRoot: "/repo",
  nsOf: (n: string) => `tn-lab-abc123-${n}`,
  port: 4100,
  relayBin: "/bin/ns-relay",
});

describe("control plan", () => {
  it("runs the server as npm start does, on loopback with the embedded database, a relay into each edge and an agent inside each edge", () => {
    const cp = planControl(input());
    expect(cp.apiUrl).toBe("http://127.0.0.1:4100");
    expect(cp.server.netns).toBeUndefined();
    expect(cp.server.env).toMatchObject({
      PORT: "4100",
      HOST: "127.0.0.1",
      TERN_DATA_DIR: "/srv/lab/ctl/server-data",
      TERN_ADMIN_EMAIL: "admin@ctl.lab",
      // The scenarios' webhook receiver listens on loopback, which webhooks may not reach by default.
      TERN_WEBHOOK_ALLOWED_NETWORKS: "127.0.0.1",
    });
    expect(cp.server.env?.TERN_ADMIN_PASSWORD).toMatch(/^[\w-]{16}$/);
    expect(cp.server.env?.DATABASE_URL).toBeUndefined();
    expect(cp.server.argv).toEqual([process.execPath, "--import", "tsx", "/repo/apps/server/src/main.ts"]);
    expect(cp.relays.map((r) => r.argv)).toEqual([
      ["/bin/ns-relay", "/run/netns/tn-lab-abc123-site-a", "127.0.0.1", "4100", "127.0.0.1", "4100"],
      ["/bin/ns-relay", "/run/netns/tn-lab-abc123-site-b", "127.0.0.1", "4100", "127.0.0.1", "4100"],
    ]);
    expect(cp.agents.map((a) => [a.edge, a.netns, a.serverUrl, a.machineId])).toEqual([
      ["site-a", "tn-lab-abc123-site-a", "http://127.0.0.1:4100", "tern-lab-abc123-site-a"],
      ["site-b", "tn-lab-abc123-site-b", "http://127.0.0.1:4100", "tern-lab-abc123-site-b"],
    ]);
  });

  it("runs an installed agent (TERN_AGENT_BIN) itself, so its own interpreter line applies; else the repo's bin through this node", () => {
    expect(agentCommand("/repo", "/usr/bin/tern-agent")).toEqual(["/usr/bin/tern-agent"]);
    expect(agentCommand("/repo", undefined)).toEqual([process.execPath, "/repo/apps/agent/bin/tern-agent"]);
  });

  it("runs the real tern-agent: register with --server and --token, then run, standalone with its own state dir and hostname", () => {
    const [a] = planControl(input()).agents;
    expect(registerArgv(a!, "tern_reg_x")).toEqual([
      "ip",
      "netns",
      "exec",
      "tn-lab-abc123-site-a",
      process.execPath,
      "/repo/apps/agent/bin/tern-agent",
      "register",
      "--server",
      "http://127.0.0.1:4100",
      "--token",
      "tern_reg_x",
      "--mode",
      "standalone",
      "--state-dir",
      "/srv/lab/ctl/nodes/site-a/agent",
      "--hostname",
      "site-a",
    ]);
    const spec = agentSpec(a!);
    expect(spec.netns).toBe("tn-lab-abc123-site-a");
    expect(spec.argv).toEqual([
      process.execPath,
      RESPAWN_SCRIPT,
      process.execPath,
      "/repo/apps/agent/bin/tern-agent",
      "run",
      "--mode",
      "standalone",
      "--state-dir",
      "/srv/lab/ctl/nodes/site-a/agent",
      "--hostname",
      "site-a",
      "--log-level",
      "info",
    ]);
    expect(spec.env).toBeUndefined();
  });

  it("passes DATABASE_URL through and keeps an earlier admin account", () => {
    const cp = planControl({
      ...input(),
      databaseUrl: "postgres://u@db/tern",
      admin: { email: "a@b.lab", password: "kept-password" },
    });
    expect(cp.server.env).toMatchObject({
      DATABASE_URL: "postgres://u@db/tern",
      TERN_ADMIN_EMAIL: "a@b.lab",
      TERN_ADMIN_PASSWORD: "kept-password",
    });
  });

  it("passes more server settings through (kept for later starts), but never over the lab's own", () => {
    const cp = planControl({ ...input(), serverEnv: { TERN_PROBE_INTERVAL_MS: "100", PORT: "1", HOST: "0.0.0.0" } });
    expect(cp.server.env).toMatchObject({ TERN_PROBE_INTERVAL_MS: "100", HOST: "127.0.0.1" });
    expect(cp.server.env?.PORT).toBe(String(input().port));
    expect(cp.serverEnv).toEqual({ TERN_PROBE_INTERVAL_MS: "100", PORT: "1", HOST: "0.0.0.0" });
  });

  it("with control over a cloud, relays once on the management node and points agents at it", () => {
    const cp = planControl(input(topology({ cloud: "inet" })));
    expect(cp.relays.map((r) => r.argv.slice(1, 4))).toEqual([["/run/netns/tn-lab-abc123-mgmt", "100.64.3.2", "4100"]]);
    expect(cp.agentServerUrl).toBe("http://100.64.3.2:4100");
    expect(cp.agents.map((a) => a.serverUrl)).toEqual(["http://100.64.3.2:4100", "http://100.64.3.2:4100"]);
    // Plain http across the lab's network: the agent refuses it unless told --insecure.
    expect(registerArgv(cp.agents[0]!, "t")).toContain("--insecure");
  });

  it("describes the command lines without secrets", () => {
    const lines = describeControl(planControl(input()));
    expect(lines[0]).toMatch(/^server \(root namespace, http:\/\/127\.0\.0\.1:4100\): env PORT=4100 HOST=127\.0\.0\.1 /);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^agent site-b: ip netns exec tn-lab-abc123-site-b .*tern-agent register --server http:\/\/127\.0\.0\.1:4100 --token <registration token>/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^agent site-b: ip netns exec tn-lab-abc123-site-b .*tern-agent run --mode standalone/),
    );
    expect(lines.join("\n")).not.toMatch(/PASSWORD|tern_reg_/);
  });
});

describe("interface assignment", () => {
  const dual = planLab(
    Topology.parse({
      name: "dual",
      clouds: [{ name: "isp1" }, { name: "isp2" }],
      edges: [
        { name: "site-a", wan: [{ cloud: "isp1" }, { cloud: "isp2" }], lan: [{ lan: "lan-a" }] },
        { name: "site-b", wan: [{ cloud: "isp1" }, { cloud: "isp2", defaultRoute: false }] },
      ],
      lans: [{ name: "lan-a", subnet: "192.168.10.0/24" }],
    }),
  ).plan!;
  const registered = (names: string[]) => ({
    interfaces: names.map((name, i) => ({
      ...DeviceInterface.parse({ id: `00000000-0000-4000-8000-00000000000${i}`, devId: `mac:02:00:00:00:00:0${i}`, name }),
    })),
  });

  it("makes each planned interface an assigned WAN (address, gateway, metric) or LAN, by the registered devId", () => {
    const a = interfaceAssignment(dual, "site-a", registered(["lan0", "wan1", "wan0", "eth9"]));
    expect(a.map((i) => [i.devId, i.name, i.type, i.isAssigned, i.IPv4, i.IPv4Mask, i.gateway, i.metric])).toEqual([
      ["mac:02:00:00:00:00:02", "wan0", "WAN", true, "100.64.1.2", 24, "100.64.1.1", 100],
      ["mac:02:00:00:00:00:01", "wan1", "WAN", true, "100.65.1.2", 24, "100.65.1.1", 200],
      ["mac:02:00:00:00:00:00", "lan0", "LAN", true, "192.168.10.1", 24, "", 0],
    ]);
  });

  it("gives a WAN without a default route no gateway, and the other clouds' subnets as static routes", () => {
    const b = interfaceAssignment(dual, "site-b", registered(["wan0", "wan1"]));
    expect(b.find((i) => i.name === "wan1")).toMatchObject({ gateway: "", metric: 0 });
    expect(staticRoutes(dual, "site-a")).toEqual([
      { destination: "100.65.0.0/16", gateway: "100.65.1.1", ifname: "wan1", metric: 200 },
    ]);
    // Not its default route, still its way to isp2's other members.
    expect(staticRoutes(dual, "site-b")).toEqual([
      { destination: "100.65.0.0/16", gateway: "100.65.2.1", ifname: "wan1", metric: 200 },
    ]);
  });

  it("refuses a device that registered without a planned interface", () => {
    expect(() => interfaceAssignment(dual, "site-a", registered(["wan0"]))).toThrow(
      /registered without wan1, lan0 \(it has wan0\)/,
    );
  });
});

describe("waitForHttp", () => {
  it("waits until the endpoint answers 2xx", async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      res.writeHead(calls < 3 ? 503 : 200).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await waitForHttp(`http://127.0.0.1:${(server.address() as { port: number }).port}/ready`, 10_000);
      expect(calls).toBe(3);
    } finally {
      server.close();
    }
  });

  it("gives up at once when the process behind it has exited", async () => {
    const t0 = Date.now();
    await expect(waitForHttp("http://127.0.0.1:9/", 30_000, async () => false)).rejects.toThrow(/exited/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
