/** `POST <server>/api/connect/register`: what the agent does once, with its registration token. */
import { type Agent, Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { PROTOCOL_VERSION, type RegisterRequest, RegisterResponse, registerProofText } from "@tern/protocol";
import { type SimKey, signText } from "./device-key.ts";
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

/** The registration of device `index`, signed now by its key (`at` overrides the signed time). */
export function registerRequest(
  token: string,
  prefix: string,
  index: number,
  agentVersion: string,
  key: SimKey,
  protocol = PROTOCOL_VERSION,
  at = Date.now(),
): RegisterRequest {
  const id = machineId(prefix, index);
  return {
    token,
    machineId: id,
    hostname: hostname(prefix, index),
    interfaces: registerInterfaces(index),
    versions: { agent: agentVersion, protocol },
    identity: {
      publicKey: key.publicKey,
      at,
      signature: signText(key.privateKey, registerProofText({ machineId: id, publicKey: key.publicKey, at })),
    },
  };
}

/**
 * Registers one device. Uses node:http with the fleet's keep-alive agent
 * rather than fetch: the fleet closes the agent's sockets after onboarding,
 * so idle registration connections do not stay in every device's share of memory.
 */
export async function register(server: string, body: RegisterRequest, agent?: Agent): Promise<RegisterResponse> {
  let status: number;
  let text: string;
  try {
    [status, text] = await post(registerUrl(server), JSON.stringify(body), agent);
  } catch (err) {
    throw new RegistrationError(`register ${body.machineId}: ${(err as Error).message}`, null, "");
  }
  if (status < 200 || status > 299)
    throw new RegistrationError(`register ${body.machineId}: HTTP ${status}: ${text.slice(0, 300)}`, status, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RegistrationError(`register ${body.machineId}: response is not JSON: ${text.slice(0, 300)}`, status, text);
  }
  const parsed = RegisterResponse.safeParse(json);
  if (!parsed.success) {
    throw new RegistrationError(
      `register ${body.machineId}: unexpected response: ${parsed.error.issues[0]?.message}`,
      status,
      text,
    );
  }
  return parsed.data;
}

/** An agent for `register` shared by a fleet: at most `sockets` connections, kept alive between requests. */
export function registrationAgent(server: string, sockets: number): Agent {
  const options = { keepAlive: true, maxSockets: sockets };
  return new URL(server).protocol === "https:" ? new HttpsAgent(options) : new HttpAgent(options);
}

function post(url: string, body: string, agent: Agent | undefined): Promise<[number, string]> {
  const u = new URL(url);
  const request = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: "POST",
        agent,
        timeout: 30_000,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve([res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8")]));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out after 30 s")));
    req.on("error", reject);
    req.end(body);
  });
}
