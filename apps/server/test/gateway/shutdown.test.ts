/**
 * What a device sees when the server stops (SIGTERM → RunningServer.close()): its link closed with 1012
 * "service restart", so the agent reconnects with back-off, and the link's bookkeeping written before the
 * database closes. (Requests in flight finishing: test/server.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { useGatewayServer } from "../support/gateway.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";

const g = useGatewayServer();

describe("server shutdown", () => {
  it("closes devices' links with 1012 and records them offline", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const device = devices[0]!;
    const link = await openRawLink(g.server.url, device.token, device);
    link.send(helloFor(device.machineId));
    await link.next("welcome");
    const connection = () =>
      g.database.db.selectFrom("devices").select("connection").where("id", "=", device.id).executeTakeFirstOrThrow();
    expect(await connection()).toEqual({ connection: "connected" });

    await g.restart();
    expect(await link.closed).toEqual({ code: 1012, reason: "server restarting: connect again" });
    expect(await connection()).not.toEqual({ connection: "connected" });
  });
});
