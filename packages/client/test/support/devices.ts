/**
 * Devices for client and CLI tests, registered the way a router registers
 * (POST /api/connect/register with a registration token), by the simulated
 * agent of test-harness. The one place to adapt when device registration
 * changes (e.g. an Ed25519 device key): the simulator does the registering.
 */
import { Simulator } from "@tern/test-harness/src/simulator/index.ts";

export interface RegisteredDevices {
  /** Ids of the new devices, pending approval. */
  ids: string[];
  /** Connects the simulated agents (after approval they apply their jobs). */
  connect(): Promise<void>;
  /** From now on the agents' applies fail in this driver (e.g. "ikev2"), or succeed again with null. */
  failApplies(driver: string | null): void;
  /** Closes the agents' connections (the devices go offline). */
  disconnect(): Promise<void>;
  stop(): Promise<void>;
}

/** Registers `count` pending devices with a registration token of the organization. */
export async function registerDevices(serverUrl: string, registrationToken: string, count: number): Promise<RegisteredDevices> {
  const fleet = Simulator.create({
    server: serverUrl,
    token: registrationToken,
    count,
    machinePrefix: `cli-${Math.random().toString(16).slice(2, 10)}`,
    reconnectMinMs: 100,
    reconnectMaxMs: 1000,
    connect: false,
  });
  await fleet.registerAll();
  return {
    ids: fleet.devices.map((d) => d.deviceId!),
    connect: () => fleet.connectAll(),
    disconnect: () => fleet.disconnectAll(),
    failApplies: (driver) => fleet.setApplyBehaviour({ failDriver: driver }),
    stop: () => fleet.stop(),
  };
}
