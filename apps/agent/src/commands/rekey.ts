/**
 * `tern-agent rekey`: replaces the device key. The new key is written beside
 * the current one first (device-key.next.pem), then proven on a link of its
 * own (the running daemon's link is replaced for a moment and reconnects):
 * both keys sign the new public key, and once the server holds it the new key
 * becomes the current one. Interrupted anywhere, the agent still connects:
 * the server's challenge names the key it holds (identity/device-key.ts).
 */
import { rename } from "node:fs/promises";
import { PROTOCOL_VERSION } from "@tern/protocol";
import { ControlClient } from "../control/client.ts";
import { loadTrust } from "../control/tls.ts";
import { checkServerTransport, deviceWebsocketUrl } from "../control/urls.ts";
import { AgentError, describeError } from "../errors.ts";
import { keyForChallenge, loadCredentials, newDeviceKey, saveDeviceKey } from "../identity/index.ts";
import { createLogger } from "../log.ts";
import { AGENT_VERSION } from "../version.ts";
import { type CliDeps, hostnameOf, pathsOf } from "./deps.ts";

export async function rekey({ options, io }: CliDeps): Promise<number> {
  const paths = pathsOf(options);
  const creds = await loadCredentials(paths.device);
  if (!creds) throw new AgentError("NOT_REGISTERED", `not registered (no ${paths.device}): run tern-agent register first`);
  checkServerTransport(creds.server, options.insecure || creds.insecure === true);
  const trust = await loadTrust(options.caFile ?? creds.caFile);
  const next = newDeviceKey();
  await saveDeviceKey(paths.deviceKeyNext, next);
  const log = createLogger(options.logLevel === "info" ? "warn" : options.logLevel);
  const client = new ControlClient({
    url: deviceWebsocketUrl(creds.server),
    token: creds.deviceToken,
    deviceId: creds.deviceId,
    key: (serverKey) => keyForChallenge(paths, serverKey),
    ca: trust.ca,
    log,
    backoff: { initialMs: 500, maxMs: 2000, factor: 2 },
    handlers: {
      hello: () => ({
        protocolVersion: PROTOCOL_VERSION,
        agentVersion: AGENT_VERSION,
        machineId: creds.machineId,
        hostname: hostnameOf(options),
        appliedHash: null,
      }),
      welcome: () => {},
      apply: async () => ({ ok: false, appliedHash: null, rolledBack: false, drivers: [], error: "INTERNAL: rekey link" }),
      request: async () => {
        throw new AgentError("INTERNAL", "rekey link answers no requests");
      },
    },
  });
  try {
    client.start();
    const deadline = Date.now() + 30_000;
    while (!client.connected) {
      if (Date.now() > deadline)
        throw new AgentError("REGISTER_FAILED", `could not connect to ${creds.server}: ${client.lastError ?? "no welcome"}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await client.rekey(next);
    await rename(paths.deviceKeyNext, paths.deviceKey);
  } catch (err) {
    if (err instanceof AgentError) throw err;
    throw new AgentError("REGISTER_FAILED", `the server did not take the new key: ${describeError(err)}`);
  } finally {
    await client.stop();
  }
  io.out(`device key replaced: ${next.publicKey}\n`);
  return 0;
}
