/**
 * The tunnel facts of a scoped read (a list page, the pending-tunnel duty's slice, one device's tunnels) ask
 * the jobs index device by device, where the organization's read hashes its queued and running jobs
 * (services/tunnels/query.ts): both must give each end the same configuration state.
 */
import { describe, expect, it } from "vitest";
import { tunnelFacts } from "../../src/services/tunnels/query.ts";
import { insertTestJob, insertTestTunnel, insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

const t = useTestServer();

describe("tunnel facts, scoped and whole", () => {
  it("give every end the same configuration state, whichever way the jobs are read", async () => {
    const [queued, running, failed, recovered, otherJob, quiet] = await Promise.all(
      Array.from({ length: 6 }, () => insertValidDevice(t)),
    );
    await insertTestJob(t, queued!.id, { state: "queued" });
    await insertTestJob(t, running!.id, { state: "running" });
    await insertTestJob(t, failed!.id, { state: "failed", createdAt: new Date(Date.now() - 60_000) });
    await insertTestJob(t, recovered!.id, { state: "failed", createdAt: new Date(Date.now() - 60_000) });
    await insertTestJob(t, recovered!.id, { state: "complete", createdAt: new Date(Date.now() - 30_000) });
    // Not a configuration job: it says nothing of the device's configuration.
    await insertTestJob(t, otherJob!.id, { state: "queued", type: "restart-agent" });
    const tunnels = [
      await insertTestTunnel(t, queued!, running!, { num: 1 }),
      await insertTestTunnel(t, failed!, recovered!, { num: 2 }),
      await insertTestTunnel(t, otherJob!, quiet!, { num: 3 }),
      await insertTestTunnel(t, queued!, quiet!, { num: 4 }),
    ];
    const org = t.admin.orgId;
    const read = async (scope: Parameters<typeof tunnelFacts>[1]) =>
      (
        await t.database.db
          .selectFrom(tunnelFacts(org, scope))
          .select(["f.num", "f.a_config", "f.b_config"])
          .orderBy("f.num")
          .execute()
      ).map((r) => [r.num, r.a_config, r.b_config]);

    const expected = [
      [1, "in-flight", "in-flight"],
      [2, "failed", "applied"],
      [3, "applied", "applied"],
      [4, "in-flight", "applied"],
    ];
    expect(await read({})).toEqual(expected);
    expect(await read({ ids: tunnels.map((x) => x.id) })).toEqual(expected);
    expect(await read({ ids: [tunnels[1]!.id, tunnels[3]!.id] })).toEqual([expected[1], expected[3]]);
    expect(await read({ deviceId: queued!.id })).toEqual([expected[0], expected[3]]);
    expect(await read({ deviceId: recovered!.id })).toEqual([expected[1]]);
  });
});
