/**
 * Onboarding through the public REST API, the way an admin does it: log in,
 * create a registration token, let the agents register, approve each device,
 * wait until it is connected. Paths follow the reference system (REFERENCE.md)
 * and the shapes come from @tern/protocol; this runs for the first time when
 * apps/server serves the API (issue 3).
 */
import { Device, RegistrationTokenCreated, TokenPair } from "@tern/protocol";
import { z } from "zod";

export const API = {
  login: "/api/users/login",
  tokens: "/api/tokens",
  devices: "/api/devices",
  device: (id: string) => `/api/devices/${id}`,
} as const;

export class ApiClient {
  private token: string | null = null;

  constructor(readonly baseUrl: string) {}

  async request<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    return schema.parse(text ? JSON.parse(text) : null);
  }

  async login(email: string, password: string): Promise<void> {
    const pair = await this.request("POST", API.login, TokenPair, { username: email, password });
    this.token = pair.accessToken;
  }

  async createRegistrationToken(name: string): Promise<string> {
    return (await this.request("POST", API.tokens, RegistrationTokenCreated, { name })).token;
  }

  async devices(): Promise<Device[]> {
    return this.request("GET", `${API.devices}?limit=1000`, z.array(Device));
  }

  async approve(id: string): Promise<void> {
    await this.request("PUT", API.device(id), z.unknown(), { isApproved: true });
  }
}

/** Waits until every machine id has registered, approves each, and waits until all are connected. */
export async function approveAll(api: ApiClient, machineIds: string[], timeoutMs = 60_000): Promise<Map<string, string>> {
  const deadline = Date.now() + timeoutMs;
  const ids = new Map<string, string>();
  for (;;) {
    const devices = await api.devices();
    for (const d of devices) {
      if (!machineIds.includes(d.machineId)) continue;
      ids.set(d.machineId, d.id);
      if (!d.isApproved) await api.approve(d.id);
    }
    const mine = devices.filter((d) => machineIds.includes(d.machineId));
    if (mine.length === machineIds.length && mine.every((d) => d.isApproved && d.isConnected)) return ids;
    if (Date.now() > deadline) {
      const missing = machineIds.filter((m) => !mine.some((d) => d.machineId === m && d.isConnected));
      throw new Error(`devices not registered/connected after ${timeoutMs} ms: ${missing.join(", ")}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
