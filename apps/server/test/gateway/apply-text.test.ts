/**
 * An apply carries the desired config's stored JSON text as it is, not parsed
 * and written out again (jobs/job-engine.ts `send`): what the device receives
 * is byte for byte the message JSON.stringify of the opened config writes, its
 * config passes the protocol's schema, and its hash is the config's. Checked
 * for both ways an apply goes out: the first apply of a hello (hello-batch.ts)
 * and the dispatcher's after a change; the welcome's status period is the
 * config's.
 */
import { configHash, DeviceConfig } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { readDesiredConfig } from "../../src/services/desired-config-seal.ts";
import { useGatewayServer } from "../support/gateway.ts";
import { helloFor, openRawLink } from "../support/raw-link.ts";

const g = useGatewayServer();

describe("apply text", () => {
  it("the hello's apply and the dispatcher's carry the stored config exactly", async () => {
    const { devices } = await g.fleet(1, { connect: false, queueConfig: true });
    const device = devices[0]!;
    const link = await openRawLink(g.server.url, device.token, device);
    const texts: string[] = [];
    link.ws.on("message", (data) => texts.push(String(data)));
    const answer = (m: { id: string; hash: string }) =>
      link.send({ type: "apply-result", id: m.id, ok: true, appliedHash: m.hash, rolledBack: false, drivers: [] });

    link.send(helloFor(device.machineId));
    const welcome = await link.next("welcome");
    const first = await link.next("apply");
    const [jobId] = await g.change(device.id);
    answer(first);
    const second = await link.next("apply", (m) => m.id !== first.id);
    answer(second);
    await g.waitForJobs([jobId!], "complete");

    const stored = await readDesiredConfig(g.database.db, g.server.deps.keyring, device.id);
    expect(stored).not.toBeNull();
    for (const apply of [first, second]) {
      const text = texts.find((t) => t.includes(`"id":"${apply.id}"`));
      const config = DeviceConfig.parse(apply.config);
      expect(configHash(config)).toBe(apply.hash);
      if (apply === second) {
        // The newest desired config, as stored, in exactly the bytes the parse-and-stringify path sent.
        expect(apply.config).toEqual(stored);
        expect(text).toBe(JSON.stringify({ type: "apply", id: apply.id, hash: apply.hash, config: stored }));
      } else expect(text).toBe(JSON.stringify({ type: "apply", id: apply.id, hash: apply.hash, config: apply.config }));
    }
    expect(first.hash).not.toBe(second.hash);
    expect(welcome.statusIntervalMs).toBe(DeviceConfig.parse(first.config).monitoring.statusIntervalMs);
    link.ws.close();
  });
});
