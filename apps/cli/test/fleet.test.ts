/**
 * The admin's daily commands against a real server with simulated routers:
 * org use, devices ls/show/approve, tunnels create + jobs watch, tokens
 * create, notifications, with --json parsed and the not-found/forbidden exits.
 */
import { randomUUID } from "node:crypto";
import type { DeviceSummary, Job, TunnelSummary } from "@tern/client";
import { createTernClient, ok, type TernClient } from "@tern/client";
import { useApiServer } from "@tern/client/test/support/api-server.ts";
import { type RegisteredDevices, registerDevices } from "@tern/client/test/support/devices.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAtTerminal, useTern } from "./support/run-tern.ts";

const s = useApiServer();
const tern = useTern();
let admin: TernClient;
let routers: RegisteredDevices;
let names: string[];

beforeAll(async () => {
  admin = createTernClient({ baseUrl: s.url });
  await admin.login(s.admin.email, s.admin.password);
  const registration = await ok(admin.api.POST("/api/tokens", { body: { name: "cli test" } }));
  routers = await registerDevices(s.url, registration.token, 2);
  names = [];
  for (const id of routers.ids) names.push((await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id } } }))).name);
  const login = await tern.run(["login", "--server", s.url, "--email", s.admin.email, "--password-stdin"], {
    input: s.admin.password,
  });
  expect(login.code, login.stderr).toBe(0);
});

afterAll(async () => {
  await routers?.stop();
});

describe("devices", () => {
  it("ls lists the pending devices as a table and as JSON", async () => {
    const table = await tern.run(["devices", "ls", "--pending"]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+HOSTNAME\s+APPROVED\s+CONNECTED/);
    expect(lines).toHaveLength(3);
    for (const name of names) expect(table.stdout).toContain(name);

    const json = await tern.run(["devices", "ls", "--json"]);
    const devices = json.json<DeviceSummary[]>();
    expect(devices.map((d) => d.id).sort()).toEqual([...routers.ids].sort());
    expect(devices.every((d) => !d.isApproved)).toBe(true);
  });

  it("show of an unknown device exits 4, by name and by id", async () => {
    const byName = await tern.run(["devices", "show", "no-such-router"]);
    expect(byName.code).toBe(4);
    expect(byName.stderr).toContain("no-such-router");
    const byId = await tern.run(["devices", "show", randomUUID(), "--json"]);
    expect(byId.code).toBe(4);
    expect(JSON.parse(byId.stderr)).toMatchObject({ code: "NOT_FOUND", exitCode: 4 });
  });

  it("approve by name assigns WAN and LAN and queues the configuration jobs", async () => {
    const r = await tern.run(["devices", "approve", ...names, "--wan", "eth0", "--lan", "eth1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const answer = r.json<{ approved: { id: string }[]; jobIds: string[] }>();
    expect(answer.approved.map((d) => d.id).sort()).toEqual([...routers.ids].sort());
    expect(answer.jobIds.length).toBeGreaterThanOrEqual(2);

    const shown = (await tern.run(["devices", "show", names[0]!, "--json"])).json<{
      isApproved: boolean;
      interfaces: { name: string; type: string; isAssigned: boolean }[];
    }>();
    expect(shown.isApproved).toBe(true);
    expect(shown.interfaces.find((i) => i.name === "eth0")).toMatchObject({ type: "WAN", isAssigned: true });
    expect((await tern.run(["devices", "ls", "--pending", "--json"])).json()).toEqual([]);

    // The routers connect and apply their first configuration.
    await routers.connect();
    const watched = await tern.run(["jobs", "watch", ...answer.jobIds, "--interval", "0.2", "--timeout", "60", "--json"]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.json<{ jobs: Job[] }>().jobs.map((j) => j.state)).toEqual(answer.jobIds.map(() => "complete"));
  });

  it("human show prints the device and its interfaces", async () => {
    const r = await tern.run(["devices", "show", names[0]!]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Name:\s+/m);
    expect(r.stdout).toMatch(/^INTERFACE\s+TYPE\s+ASSIGNED/m);
    expect(r.stdout).toMatch(/^eth0\s+WAN\s+yes/m);
  });
});

describe("tunnels and jobs", () => {
  it("tunnels create queues jobs; jobs watch follows them until complete, with progress on stderr", async () => {
    const created = await tern.run(["tunnels", "create", names[0]!, names[1]!, "--description", "cli", "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const answer = created.json<{ tunnels: { id: string; num: number }[]; jobIds: string[] }>();
    expect(answer.tunnels).toHaveLength(1);
    expect(answer.jobIds).toHaveLength(2);

    const watched = await tern.run(["jobs", "watch", ...answer.jobIds, "--interval", "0.2", "--timeout", "60"]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stderr).toMatch(/jobs: 2\/2 done/);
    expect(watched.stdout).toMatch(/^ID\s+TYPE\s+STATE/m);
    expect(watched.stdout.match(/\bcomplete\b/g)).toHaveLength(2);

    // At a terminal the progress is one live line (ora) that ends with a tick.
    const live = await runAtTerminal(tern, ["jobs", "watch", ...answer.jobIds]);
    expect(live.code, live.screen).toBe(0);
    expect(live.screen).toMatch(/✔ jobs: 2\/2 done \(0 running, 0 queued\)/);

    const listed = (await tern.run(["tunnels", "ls", "--device", names[0]!, "--json"])).json<TunnelSummary[]>();
    expect(listed.map((t) => t.id)).toEqual([answer.tunnels[0]!.id]);
    const jobs = (await tern.run(["jobs", "ls", "--state", "complete", "--json"])).json<Job[]>();
    expect(jobs.map((j) => j.id)).toEqual(expect.arrayContaining(answer.jobIds));
  });

  it("a second tunnel on the same WAN pair is refused: exit 1, the API's code on stderr", async () => {
    const again = await tern.run(["tunnels", "create", names[0]!, names[1]!, "--wait", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).code).toMatch(/CONFLICT|TUNNEL_OVERLAPPING/);
  });

  it("jobs watch with nothing open says so and exits 0", async () => {
    // An organization of its own: the fleet's routers may still queue jobs of
    // their own here (a public address learnt after the tunnel), so "nothing
    // open" is only certain where there is no router.
    const quiet = await ok(admin.api.POST("/api/organizations", { body: { name: `quiet-${randomUUID()}` } }));
    const r = await tern.run(["jobs", "watch", "--org", quiet.id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual({ jobs: [] });
    const human = await tern.run(["jobs", "watch", "--org", quiet.id]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("no job is queued or running");
  });

  it("a usage error in tunnels create exits 2 before calling the API", async () => {
    expect((await tern.run(["tunnels", "create", names[0]!])).code).toBe(2);
    expect((await tern.run(["tunnels", "ls", "--status", "sideways"])).code).toBe(2);
  });
});

describe("peers", () => {
  it("peers ls lists the organization's peers, never their pre-shared keys", async () => {
    expect((await tern.run(["peers", "ls", "--json"])).json()).toEqual([]);
    const psk = `psk-${randomUUID()}`;
    const peer = await ok(
      admin.api.POST("/api/peers", {
        body: { name: "hq-gw", remoteIP: "192.0.2.10", remoteTrafficSelectors: ["192.168.90.0/24"], psk },
      }),
    );
    const json = await tern.run(["peers", "ls", "--json"]);
    expect(json.json<{ id: string; name: string }[]>().map((p) => p.id)).toEqual([peer.id]);
    expect(json.stdout).not.toContain(psk);
    const table = await tern.run(["peers", "ls"]);
    expect(table.stdout).toMatch(/^NAME\s+REMOTE IP\s+REMOTE ID\s+IKE\s+TUNNELS\s+ID$/m);
    expect(table.stdout).toMatch(/^hq-gw\s+192\.0\.2\.10\s/m);
  });
});

describe("organizations", () => {
  it("org use switches the organization of later commands; --org overrides it once; --default goes back", async () => {
    const name = `branch offices ${randomUUID().slice(0, 6)}`;
    const second = await ok(admin.api.POST("/api/organizations", { body: { name } }));
    const orgs = (await tern.run(["org", "ls", "--json"])).json<{ id: string; current: boolean }[]>();
    expect(orgs.map((o) => o.id)).toContain(second.id);

    const use = await tern.run(["org", "use", name]);
    expect(use.code, use.stderr).toBe(0);
    expect((await tern.run(["devices", "ls", "--json"])).json()).toEqual([]);
    const marked = (await tern.run(["org", "ls", "--json"])).json<{ id: string; current: boolean }[]>();
    expect(marked.find((o) => o.current)?.id).toBe(second.id);
    const table = await tern.run(["org", "ls"]);
    expect(table.stdout).toMatch(new RegExp(`^\\*\\s+${name}`, "m"));

    const defaultOrg = (await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id: routers.ids[0]! } } }))).org;
    const once = (await tern.run(["devices", "ls", "--org", defaultOrg, "--json"])).json<unknown[]>();
    expect(once).toHaveLength(2);
    expect((await tern.run(["org", "use", "no-such-org"])).code).toBe(4);

    expect((await tern.run(["org", "use", "--default"])).code).toBe(0);
    expect((await tern.run(["devices", "ls", "--json"])).json<unknown[]>()).toHaveLength(2);
  });
});

describe("access tokens", () => {
  it("tokens create shows the secret once, with the permission masks; the token works for what it allows (exit 5 otherwise)", async () => {
    const r = await tern.run(["tokens", "create", "monitoring", "--perm", "devices=get", "--perm", "jobs=1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const created = r.json<{ id: string; token: string; permissions: Record<string, number> }>();
    expect(created.token).toBeTruthy();
    expect(created.permissions).toMatchObject({ devices: 1, jobs: 1 });

    const listed = await tern.run(["tokens", "ls", "--json"]);
    expect(listed.stdout).not.toContain(created.token);
    expect(listed.json<{ id: string }[]>().map((t) => t.id)).toContain(created.id);

    const human = await tern.run(["tokens", "create", "human", "--perm", "devices=get,put"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^Permissions:.*devices=get,put/m);
    expect(human.stdout).toContain("shown only now");

    const env = { TERN_TOKEN: created.token, TERN_SERVER: s.url };
    const devices = await tern.run(["devices", "ls", "--json"], { env });
    expect(devices.code, devices.stderr).toBe(0);
    expect(devices.json<unknown[]>()).toHaveLength(2);
    const denied = await tern.run(["tokens", "create", "escalate"], { env });
    expect(denied.code).toBe(5);

    expect((await tern.run(["tokens", "create", "bad", "--perm", "devices=fly"])).code).toBe(2);
    expect((await tern.run(["tokens", "delete", created.id])).code).toBe(2); // no --yes and no terminal
    expect((await tern.run(["tokens", "delete", created.id, "--yes"])).code).toBe(0);
    expect((await tern.run(["devices", "ls"], { env })).code).toBe(3);
  });
});

describe("notifications", () => {
  it("ls and ack --all answer JSON; ack needs ids or --all", async () => {
    const list = await tern.run(["notifications", "ls", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(Array.isArray(list.json())).toBe(true);
    const ack = await tern.run(["notifications", "ack", "--all", "--json"]);
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.json<{ updated: number }>().updated).toBe(
      list.json<{ status: string }[]>().filter((n) => n.status === "unread").length,
    );
    expect((await tern.run(["notifications", "ls", "--unread", "--json"])).json()).toEqual([]);
    expect((await tern.run(["notifications", "ack"])).code).toBe(2);
  });
});

describe("waiting", () => {
  it("devices approve --wait follows the jobs until the router has applied them", async () => {
    const registration = await ok(admin.api.POST("/api/tokens", { body: { name: "late router" } }));
    const late = await registerDevices(s.url, registration.token, 1);
    try {
      const approving = tern.run(["devices", "approve", late.ids[0]!, "--wan", "eth0", "--wait", "--timeout", "60", "--json"]);
      // The router comes online (the server lets it in once approved) while tern waits.
      const id = late.ids[0]!;
      for (let i = 0; i < 150; i++) {
        if ((await ok(admin.api.GET("/api/devices/{id}", { params: { path: { id } } }))).isApproved) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await late.connect();
      const r = await approving;
      expect(r.code, r.stderr).toBe(0);
      const jobs = r.json<{ jobs: Job[] }>().jobs;
      expect(jobs.length).toBeGreaterThanOrEqual(1);
      expect(jobs.every((j) => j.state === "complete")).toBe(true);

      // A router whose apply fails: --wait exits 7 and shows the job's error.
      late.failApplies("ikev2");
      const failing = await tern.run(["tunnels", "create", late.ids[0]!, names[0]!, "--wait", "--timeout", "60"]);
      expect(failing.code, failing.stderr).toBe(7);
      expect(failing.stdout).toMatch(/\bfailed\b.*ikev2/);
      expect(failing.stdout).toMatch(/\bcomplete\b/);
      expect(failing.stderr).toContain("1 of 2 job(s) failed");
    } finally {
      await late.stop();
    }
  });
});

describe("notifications raised by the fleet", () => {
  it("a router going offline raises a notification that ack marks read (and resolved)", async () => {
    await ok(admin.api.PUT("/api/notificationsConf", { body: { rules: { "device-connection": { warningThreshold: 0 } } } }));
    await routers.disconnect();
    let open: { id: string; eventType: string; status: string }[] = [];
    for (let i = 0; i < 100 && open.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      open = (await ok(admin.api.GET("/api/notifications"))).filter(
        (n) => n.eventType === "device-connection" && n.status === "unread",
      );
    }
    expect(open.length).toBeGreaterThanOrEqual(1);
    const table = await tern.run(["notifications", "ls", "--unread"]);
    expect(table.stdout).toMatch(/^SEVERITY\s+TITLE/m);
    const ack = await tern.run(["notifications", "ack", open[0]!.id, "--resolve", "--json"]);
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.json()).toEqual({ updated: 1 });
    const after = (await tern.run(["notifications", "ls", "--json"])).json<{ id: string; status: string; resolved: boolean }[]>();
    expect(after.find((n) => n.id === open[0]!.id)).toMatchObject({ status: "read", resolved: true });
  });
});

describe("delete", () => {
  it("devices delete needs --yes without a terminal, then deletes", async () => {
    expect((await tern.run(["devices", "delete", names[1]!])).code).toBe(2);
    // At a terminal it asks; "no" keeps the device.
    const declined = await runAtTerminal(tern, ["devices", "delete", names[1]!], [{ expect: /Delete .*\?/, send: "n\r" }]);
    expect(declined.code, declined.screen).toBe(2);
    expect((await tern.run(["devices", "show", names[1]!])).code).toBe(0);
    const r = await tern.run(["devices", "delete", names[1]!, "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect((await tern.run(["devices", "show", names[1]!])).code).toBe(4);
  });
});
