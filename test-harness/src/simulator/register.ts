/** `POST <server>/api/connect/register`: what the agent does once, with its registration token. */
import { PROTOCOL_VERSION, type RegisterRequest, RegisterResponse } from "@tern/protocol";
import { hostname, machineId, registerInterfaces } from "./identity.ts";

export class RegistrationError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly body: string,
  ) {
    super(message);
    this.name = "RegistrationError";
  }
}

export function registerUrl(server: string): string {
  return new URL("/api/connect/register", server).toString();
}

export function registerRequest(
  token: string,
  prefix: string,
  index: number,
  agentVersion: string,
  protocol = PROTOCOL_VERSION,
): RegisterRequest {
  return {
    token,
    machineId: machineId(prefix, index),
    hostname: hostname(prefix, index),
    interfaces: registerInterfaces(index),
    versions: { agent: agentVersion, protocol },
  };
}

/** Registers one device; the server's error body is kept in the thrown error. */
export async function register(server: string, body: RegisterRequest, signal?: AbortSignal): Promise<RegisterResponse> {
  let res: globalThis.Response;
  try {
    res = await fetch(registerUrl(server), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: signal ?? AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new RegistrationError(`register ${body.machineId}: ${(err as Error).message}`, null, "");
  }
  const text = await res.text();
  if (!res.ok)
    throw new RegistrationError(`register ${body.machineId}: HTTP ${res.status}: ${text.slice(0, 300)}`, res.status, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RegistrationError(`register ${body.machineId}: response is not JSON: ${text.slice(0, 300)}`, res.status, text);
  }
  const parsed = RegisterResponse.safeParse(json);
  if (!parsed.success) {
    throw new RegistrationError(
      `register ${body.machineId}: unexpected response: ${parsed.error.issues[0]?.message}`,
      res.status,
      text,
    );
  }
  return parsed.data;
}
