/** The seam for the management server and agents: their command lines and the readiness wait. */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { describeControl, planControl, waitForHttp } from "../src/lab/control/index.ts";
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
  it("runs the server on loopback with the embedded database, a relay into each edge and an agent inside each edge", () => {
    const cp = planControl(input());
    expect(cp.apiUrl).toBe("http://127.0.0.1:4100");
    expect(cp.server.netns).toBeUndefined();
    expect(cp.server.env).toMatchObject({ PORT: "4100", HOST: "127.0.0.1", TERN_DATA_DIR: "/srv/lab/ctl/server-data" });
    expect(cp.server.env?.DATABASE_URL).toBeUndefined();
    expect(cp.server.argv).toEqual(["/repo/node_modules/.bin/tsx", "/repo/apps/server/src/main.ts"]);
    expect(cp.relays.map((r) => r.argv)).toEqual([
      ["/bin/ns-relay", "/run/netns/tn-lab-abc123-site-a", "127.0.0.1", "4100", "127.0.0.1", "4100"],
      ["/bin/ns-relay", "/run/netns/tn-lab-abc123-site-b", "127.0.0.1", "4100", "127.0.0.1", "4100"],
    ]);
    const agents = cp.agents("secret-token");
    expect(agents.map((a) => [a.netns, a.env?.TERN_SERVER_URL, a.env?.TERN_AGENT_MODE, a.env?.TERN_MACHINE_ID])).toEqual([
      ["tn-lab-abc123-site-a", "http://127.0.0.1:4100", "standalone", "tern-lab-abc123-site-a"],
      ["tn-lab-abc123-site-b", "http://127.0.0.1:4100", "standalone", "tern-lab-abc123-site-b"],
    ]);
    expect(agents[0]?.env?.TERN_REGISTRATION_TOKEN).toBe("secret-token");
  });

  it("passes DATABASE_URL through and keeps an earlier admin account", () => {
    const cp = planControl({
      ...input(),
      databaseUrl: "postgres://u@db/tern",
      admin: { email: "a@b.lab", password: "kept-password" },
    });
    expect(cp.server.env).toMatchObject({ DATABASE_URL: "postgres://u@db/tern", TERN_BOOTSTRAP_ADMIN_PASSWORD: "kept-password" });
  });

  it("with control over a cloud, relays once on the management node and points agents at it", () => {
    const cp = planControl(input(topology({ cloud: "inet" })));
    expect(cp.relays.map((r) => r.argv.slice(1, 4))).toEqual([["/run/netns/tn-lab-abc123-mgmt", "100.64.3.2", "4100"]]);
    expect(cp.agentServerUrl).toBe("http://100.64.3.2:4100");
  });

  it("describes the command lines without secrets", () => {
    const lines = describeControl(planControl(input()));
    expect(lines[0]).toMatch(/^server \(root namespace, http:\/\/127\.0\.0\.1:4100\): env PORT=4100 HOST=127\.0\.0\.1 /);
    expect(lines).toContainEqual(expect.stringMatching(/^agent site-b: ip netns exec tn-lab-abc123-site-b env TERN_SERVER_URL=/));
    expect(lines.join("\n")).not.toMatch(/PASSWORD|REGISTRATION_TOKEN/);
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
