/**
 * `tern-agent register --server URL --token TOKEN [--ca-file PATH] [--insecure]`:
 * onboard this router. The device key is made at the first registration (and
 * kept for every later one: registering again with it is the same device);
 * the registration is signed with it, so a registration token alone never
 * takes over a known device. The device token and how to reach the server
 * are kept in device.json.
 */
import { ErrorBody, PROTOCOL_VERSION, RegisterRequest, RegisterResponse, registerProofText } from "@tern/protocol";
import { postJson } from "../control/http.ts";
import { loadTrust } from "../control/tls.ts";
import { checkServerTransport, registerUrl } from "../control/urls.ts";
import { AgentError, formatIssues } from "../errors.ts";
import {
  discoverInterfaces,
  loadCredentials,
  loadOrCreateDeviceKey,
  machineId,
  saveCredentials,
  signText,
} from "../identity/index.ts";
import { AGENT_VERSION } from "../version.ts";
import { type CliDeps, hostnameOf, pathsOf } from "./deps.ts";

export async function register({ options, runner, io }: CliDeps): Promise<number> {
  if (!options.server || !options.token) throw new AgentError("USAGE", "register needs --server URL and --token TOKEN");
  checkServerTransport(options.server, options.insecure);
  const trust = await loadTrust(options.caFile);
  const paths = pathsOf(options);
  const key = await loadOrCreateDeviceKey(paths.deviceKey);
  const id = await machineId(options.mode, paths.machineId);
  const at = Date.now();
  const request = RegisterRequest.safeParse({
    token: options.token,
    machineId: id,
    hostname: hostnameOf(options),
    interfaces: await discoverInterfaces(runner),
    versions: { agent: AGENT_VERSION, protocol: PROTOCOL_VERSION },
    identity: {
      publicKey: key.publicKey,
      at,
      signature: signText(key, registerProofText({ machineId: id, publicKey: key.publicKey, at })),
    },
  });
  if (!request.success)
    throw new AgentError("REGISTER_FAILED", `registration would be refused: ${formatIssues(request.error.issues)}`);
  const url = registerUrl(options.server);
  let res: { status: number; body: unknown };
  try {
    res = await postJson(url, request.data, trust.ca);
  } catch (err) {
    const e = err as Error & { code?: string };
    const tls = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(e.code ?? "") ? ` (certificates trusted: ${trust.source})` : "";
    throw new AgentError("REGISTER_FAILED", `cannot reach ${url}: ${e.code ? `${e.code}: ` : ""}${e.message}${tls}`);
  }
  if (res.status < 200 || res.status > 299) {
    const e = ErrorBody.safeParse(res.body);
    throw new AgentError(
      "REGISTER_FAILED",
      `${url} answered ${res.status}${e.success ? `: ${e.data.code}: ${e.data.error}` : ""}`,
    );
  }
  const answer = RegisterResponse.safeParse(res.body);
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
    ...(options.caFile ? { caFile: options.caFile } : {}),
    ...(options.insecure ? { insecure: true } : {}),
  });
  io.out(
    `registered as device ${answer.data.deviceId} with ${request.data.interfaces.length} interface(s); token stored in ${paths.device}, device key in ${paths.deviceKey}\n` +
      (answer.data.isApproved ? "" : "the device is not approved yet: an admin must approve it before it can connect\n"),
  );
  return 0;
}
