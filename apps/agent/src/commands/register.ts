/** `tern-agent register --server URL --token TOKEN`: onboard this router and keep its device token. */
import { ErrorBody, PROTOCOL_VERSION, RegisterRequest, RegisterResponse } from "@tern/protocol";
import { registerUrl } from "../control/urls.ts";
import { AgentError, formatIssues } from "../errors.ts";
import { discoverInterfaces, loadCredentials, machineId, saveCredentials } from "../identity/index.ts";
import { AGENT_VERSION } from "../version.ts";
import { type CliDeps, hostnameOf, pathsOf } from "./deps.ts";

export async function register({ options, runner, io }: CliDeps): Promise<number> {
  if (!options.server || !options.token) throw new AgentError("USAGE", "register needs --server URL and --token TOKEN");
  const paths = pathsOf(options);
  const request = RegisterRequest.safeParse({
    token: options.token,
    machineId: await machineId(options.mode, paths.machineId),
    hostname: hostnameOf(options),
    interfaces: await discoverInterfaces(runner),
    versions: { agent: AGENT_VERSION, protocol: PROTOCOL_VERSION },
  });
  if (!request.success)
    throw new AgentError("REGISTER_FAILED", `registration would be refused: ${formatIssues(request.error.issues)}`);
  const url = registerUrl(options.server);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request.data),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new AgentError("REGISTER_FAILED", `cannot reach ${url}: ${(err as Error).cause ?? (err as Error).message}`);
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const e = ErrorBody.safeParse(body);
    throw new AgentError(
      "REGISTER_FAILED",
      `${url} answered ${res.status}${e.success ? `: ${e.data.code}: ${e.data.error}` : ""}`,
    );
  }
  const answer = RegisterResponse.safeParse(body);
  if (!answer.success) throw new AgentError("REGISTER_FAILED", `${url} answered something that is not a RegisterResponse`);
  const previous = await loadCredentials(paths.device).catch(() => null);
  if (previous) io.err(`note: replacing the registration as device ${previous.deviceId} with ${previous.server}\n`);
  await saveCredentials(paths.device, {
    server: options.server,
    deviceId: answer.data.deviceId,
    deviceToken: answer.data.deviceToken,
    machineId: request.data.machineId,
    isApproved: answer.data.isApproved,
    registeredAt: new Date().toISOString(),
  });
  io.out(
    `registered as device ${answer.data.deviceId} with ${request.data.interfaces.length} interface(s); token stored in ${paths.device}\n` +
      (answer.data.isApproved ? "" : "the device is not approved yet: an admin must approve it before it can connect\n"),
  );
  return 0;
}
