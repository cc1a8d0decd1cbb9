/**
 * Simulated routers of one spec file's own, onboarded as an administrator
 * does it: enrolled with a registration token, approved through the API with
 * eth0 as WAN and eth1 as LAN, then connected and reporting (the status
 * reports carry the tunnels' state and figures). Each spec takes its own
 * `startIndex`: the simulator derives LAN subnets from the index, and the
 * routers of the stack and of the other specs must not overlap them.
 */
import { ok, type TernClient } from "@tern/client";
import { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { stackInfo } from "./stack-info.ts";

export interface SpecRouters {
  fleet: Simulator;
  routers: { id: string; name: string }[];
}

export async function enrolRouters(
  api: TernClient,
  o: { name: string; count: number; startIndex: number; machinePrefix: string },
): Promise<SpecRouters> {
  const registration = await ok(api.api.POST("/api/tokens", { body: { name: o.name } }));
  const fleet = Simulator.create({
    server: stackInfo().apiUrl,
    token: registration.token,
    count: o.count,
    startIndex: o.startIndex,
    machinePrefix: o.machinePrefix,
    identitySeed: `${o.machinePrefix}-${Date.now()}`,
    statusIntervalMs: 500,
    reconnectMinMs: 100,
    reconnectMaxMs: 1000,
    connect: false,
  });
  await fleet.registerAll();
  const routers: SpecRouters["routers"] = [];
  for (const d of fleet.devices) {
    const id = d.deviceId!;
    const device = await ok(api.api.GET("/api/devices/{id}", { params: { path: { id } } }));
    const iface = (name: string) => device.interfaces.find((i) => i.name === name)!;
    await ok(
      api.api.PUT("/api/devices/{id}", {
        params: { path: { id } },
        body: {
          isApproved: true,
          interfaces: [
            { devId: iface("eth0").devId, name: "eth0", type: "WAN", isAssigned: true },
            { devId: iface("eth1").devId, name: "eth1", type: "LAN", isAssigned: true },
          ],
        },
      }),
    );
    routers.push({ id, name: device.name });
  }
  // connectAll (not each device's connect) also starts the status reports.
  await fleet.connectAll();
  return { fleet, routers };
}
