/**
 * On-demand reads over the link: requestFromDevice sends `request`, resolves
 * with the validated `response`, and says DEVICE_NOT_CONNECTED,
 * DEVICE_TIMEOUT or VALIDATION_FAILED when it cannot.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/http/errors.ts";
import { useGatewayServer } from "../support/gateway.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";

const g = useGatewayServer();

const code = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (e instanceof ApiError ? e.code : String(e)),
  );

describe("requestFromDevice", () => {
  it("reads interface and BGP state and runs a ping on a connected device", async () => {
    const { devices } = await g.fleet(1);
    const link = g.server.deps.deviceLink;
    const itf = await link.requestFromDevice(devices[0]!.id, "interface-status", { devId: "pci:0000:00:03.0" });
    expect(itf).toMatchObject({ ok: true, result: { name: "eth0", devId: "pci:0000:00:03.0", operState: "up" } });
    const bgp = await link.requestFromDevice(devices[0]!.id, "bgp-status", {});
    expect(bgp.ok).toBe(true);
    const ping = await link.requestFromDevice(devices[0]!.id, "ping", { target: "10.0.0.1", count: 2 });
    expect(ping).toMatchObject({ ok: true, result: { transmitted: 2 } });
    // The device's own refusal comes back as such.
    const unknown = await link.requestFromDevice(devices[0]!.id, "interface-status", { devId: "no-such-interface" });
    expect(unknown).toMatchObject({ ok: false, error: expect.any(String) });
  });

  it("refuses bad params before sending anything", async () => {
    const { devices } = await g.fleet(1, { queueConfig: false });
    const err = await g.server.deps.deviceLink
      .requestFromDevice(devices[0]!.id, "ping", { target: "not-an-ip; reboot" } as never)
      .catch((e: ApiError) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("VALIDATION_FAILED");
    expect((err as ApiError).details[0]?.path).toBe("target");
  });

  it("says DEVICE_NOT_CONNECTED for a device without a link", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    expect(await code(g.server.deps.deviceLink.requestFromDevice(devices[0]!.id, "bgp-status", {}))).toBe("DEVICE_NOT_CONNECTED");
  });

  it("says DEVICE_TIMEOUT when the device does not answer in time", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    // The simulator answers everything: a bare link that ignores requests stands in for a stuck agent.
    const raw = await openRawLink(g.server.url, devices[0]!.token, devices[0]!);
    raw.send(helloFor(devices[0]!.machineId));
    await raw.next("welcome");
    const started = Date.now();
    expect(await code(g.server.deps.deviceLink.requestFromDevice(devices[0]!.id, "bgp-status", {}, 300))).toBe("DEVICE_TIMEOUT");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const sent = await raw.next("request");
    expect(sent).toMatchObject({ method: "bgp-status", params: {} });
    // A late answer to it is refused as unknown.
    raw.send({
      type: "response",
      id: sent.id,
      ok: true,
      result: { running: false, routerId: "", localASN: null, neighbors: [] },
    });
    await raw.next("error", (m) => m.code === "UNKNOWN_ID");
    raw.ws.close();
  });

  it("rejects an answer that does not fit the method's result schema", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const raw = await openRawLink(g.server.url, devices[0]!.token, devices[0]!);
    raw.send(helloFor(devices[0]!.machineId));
    await raw.next("welcome");
    const answer = g.server.deps.deviceLink.requestFromDevice(devices[0]!.id, "bgp-status", {}, 5000);
    const req = await raw.next("request");
    raw.send({ type: "response", id: req.id, ok: true, result: { running: "yes" } });
    expect(await answer).toMatchObject({ ok: false, error: expect.stringMatching(/invalid/) });
    raw.ws.close();
  });
});
