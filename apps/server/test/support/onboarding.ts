/**
 * Onboarding a simulated fleet exactly as an admin would, over HTTP against a
 * running server: log in, create a registration token (`POST /api/tokens`),
 * let the simulator register every device (`POST /api/connect/register`),
 * assign the interfaces and approve each device (`PUT /api/devices/{id}`),
 * then connect them. No row is written by the test itself.
 */
import type { Device, TokenPair } from "@tern/protocol";
import { Simulator, type SimulatorInput } from "@tern/test-harness/src/simulator/index.ts";

export const TEST_ADMIN = { email: "admin@example.com", password: "correct horse battery" } as const;

export interface HttpAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface AdminClient {
  call<T = unknown>(
    method: string,
    path: string,
    options?: { body?: unknown; query?: Record<string, string | number | boolean> },
  ): Promise<HttpAnswer<T>>;
}

/** An HTTP client of the API logged in as the first administrator. */
export async function adminClient(
  serverUrl: string,
  admin: { email: string; password: string } = TEST_ADMIN,
): Promise<AdminClient> {
  const request = async <T>(method: string, path: string, body: unknown, token: string | null, query = {}) => {
    const url = new URL(path, serverUrl);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
  };
  const login = await request<TokenPair>("POST", "/api/users/login", { username: admin.email, password: admin.password }, null);
  if (login.status !== 200) throw new Error(`admin login failed: ${login.status} ${JSON.stringify(login.body)}`);
  const token = login.body.accessToken;
  return { call: (method, path, options = {}) => request(method, path, options.body, token, options.query) };
}

export interface OnboardedDevice {
  id: string;
  name: string;
  position: number;
  /** Ids of the WAN (eth0) and LAN (eth1) interfaces the server gave them. */
  wanId: string;
  lanId: string;
  /** The approval's job. */
  jobIds: string[];
}

/** Registers `count` simulated devices with a new registration token, approves them through the API and connects them. */
export async function onboardFleet(
  api: AdminClient,
  serverUrl: string,
  count: number,
  simOptions: Partial<SimulatorInput> = {},
): Promise<{ fleet: Simulator; devices: OnboardedDevice[] }> {
  const reg = await api.call<{ token: string }>("POST", "/api/tokens", { body: { name: `onboarding ${Date.now()}` } });
  if (reg.status !== 201) throw new Error(`POST /api/tokens: ${reg.status} ${JSON.stringify(reg.body)}`);
  const fleet = Simulator.create({
    server: serverUrl,
    token: reg.body.token,
    count,
    machinePrefix: `onb-${Math.random().toString(16).slice(2, 10)}`,
    reconnectMinMs: 100,
    reconnectMaxMs: 1000,
    ...simOptions,
    connect: false,
  });
  await fleet.registerAll();
  const devices: OnboardedDevice[] = [];
  for (const sim of fleet.devices) {
    const id = sim.deviceId!;
    const device = await api.call<Device>("GET", `/api/devices/${id}`);
    if (device.body.isApproved) throw new Error("a newly registered device must wait for approval");
    const eth0 = device.body.interfaces.find((i) => i.name === "eth0")!;
    const eth1 = device.body.interfaces.find((i) => i.name === "eth1")!;
    const approved = await api.call<{ jobIds: string[] }>("PUT", `/api/devices/${id}`, {
      body: {
        isApproved: true,
        interfaces: [
          { devId: eth0.devId, name: eth0.name, type: "WAN", isAssigned: true },
          { devId: eth1.devId, name: eth1.name, type: "LAN", isAssigned: true },
        ],
      },
    });
    if (approved.status !== 202) throw new Error(`approving ${id}: ${approved.status} ${JSON.stringify(approved.body)}`);
    devices.push({
      id,
      name: device.body.name,
      position: sim.position,
      wanId: eth0.id,
      lanId: eth1.id,
      jobIds: approved.body.jobIds,
    });
  }
  await fleet.connectAll();
  return { fleet, devices };
}
