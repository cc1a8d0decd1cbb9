/**
 * Dumps requested from a device (POST /api/devices/{id}/dump): the server asks
 * the device over its websocket to make the archive (`dump-create`), pulls it
 * in chunks (`dump-read`), checks size and SHA-256, stores it, lists it and
 * serves it for download; failures end the dump `failed` with the reason;
 * only the newest TERN_DUMP_KEEP are kept. The device is a protocol-level
 * client here (the agent's side is apps/agent/test/control/dump-requests.test.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import type { DeviceDump, Job, TokenPair } from "@tern/protocol";
import { DUMP_CHUNK_BYTES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink, type RawLink } from "../support/raw-link.ts";

const g = useGatewayServer({ TERN_DUMP_MAX_BYTES: String(2 * 1024 * 1024), TERN_DUMP_KEEP: "2" });

async function adminToken(): Promise<string> {
  const res = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  return ((await res.json()) as TokenPair).accessToken;
}

async function call<T>(token: string, method: string, path: string): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${g.server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}

/** A connected device link that answers the dump requests with `archive` (or as `answer` says). */
async function dumpingDevice(
  archive: Buffer,
  answer: { sha256?: string; size?: number; refuse?: string } = {},
): Promise<{ id: string; raw: RawLink; reads: { offset: number; length: number }[] }> {
  const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
  const device = devices[0]!;
  const raw = await openRawLink(g.server.url, device.token, device);
  raw.send(helloFor(device.machineId));
  await raw.next("welcome");
  const reads: { offset: number; length: number }[] = [];
  const name = "tern-agent-dump-edge-1-20261125T210000Z.tar.gz";
  raw.ws.on("message", (data) => {
    const m = JSON.parse(String(data)) as { type: string; id: string; method: string; params: Record<string, number | string> };
    if (m.type !== "request") return;
    if (m.method === "dump-create") {
      if (answer.refuse) return raw.send({ type: "response", id: m.id, ok: false, error: answer.refuse });
      const sha256 = answer.sha256 ?? createHash("sha256").update(archive).digest("hex");
      raw.send({ type: "response", id: m.id, ok: true, result: { name, size: answer.size ?? archive.length, sha256 } });
    } else if (m.method === "dump-read") {
      const offset = Number(m.params.offset);
      const length = Number(m.params.length);
      expect(m.params.name).toBe(name);
      reads.push({ offset, length });
      const part = archive.subarray(offset, offset + length);
      raw.send({
        type: "response",
        id: m.id,
        ok: true,
        result: { data: part.toString("base64"), eof: offset + part.length >= archive.length },
      });
    }
  });
  return { id: device.id, raw, reads };
}

const settled = async (token: string, deviceId: string, dumpId: string): Promise<DeviceDump> =>
  (await waitUntil(
    async () => (await call<DeviceDump[]>(token, "GET", `/api/devices/${deviceId}/dumps`)).body.find((d) => d.id === dumpId),
    (dump) => dump !== undefined && dump.status !== "pending",
    10_000,
    `dump ${dumpId} to settle`,
  ))!;

describe("device dumps", () => {
  it("requests a dump, pulls it in chunks, lists it and serves the same bytes for download; audited", async () => {
    const token = await adminToken();
    const archive = randomBytes(DUMP_CHUNK_BYTES * 2 + 12_345);
    const device = await dumpingDevice(archive);
    const res = await call<DeviceDump>(token, "POST", `/api/devices/${device.id}/dump`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ device: device.id, status: "pending", fileName: null });
    expect(res.headers.get("location")).toBe(`/api/devices/${device.id}/dumps/${res.body.id}`);

    const done = await settled(token, device.id, res.body.id);
    expect(done).toMatchObject({
      status: "complete",
      fileName: "tern-agent-dump-edge-1-20261125T210000Z.tar.gz",
      size: archive.length,
      sha256: createHash("sha256").update(archive).digest("hex"),
      error: null,
    });
    expect(device.reads.map((r) => r.offset)).toEqual([0, DUMP_CHUNK_BYTES, DUMP_CHUNK_BYTES * 2]);

    const download = await fetch(`${g.server.url}/api/devices/${device.id}/dumps/${res.body.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/gzip");
    expect(download.headers.get("content-disposition")).toBe(
      'attachment; filename="tern-agent-dump-edge-1-20261125T210000Z.tar.gz"',
    );
    expect(Buffer.from(await download.arrayBuffer()).equals(archive)).toBe(true);

    const audit = await g.database.db
      .selectFrom("audit_log")
      .select("action")
      .where("resource_id", "=", device.id)
      .where("action", "like", "dump_%")
      .orderBy("at")
      .execute();
    expect(audit.map((a) => a.action)).toEqual(["dump_requested", "dump_uploaded"]);
    // Tracked as a job with the dump's id, its result naming the file.
    const job = await call<Job>(token, "GET", `/api/jobs/${res.body.id}`);
    expect(job.body).toMatchObject({
      type: "dump",
      state: "complete",
      device: { id: device.id },
      result: { dump: res.body.id, fileName: done.fileName, size: archive.length, sha256: done.sha256 },
      error: null,
    });
    device.raw.ws.close();
  });

  it("ends failed with the reason: not connected, refused by the agent, too large, wrong checksum; a failed dump is 409 DUMP_NOT_READY", async () => {
    const token = await adminToken();
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const offline = await call<DeviceDump>(token, "POST", `/api/devices/${devices[0]!.id}/dump`);
    expect((await settled(token, devices[0]!.id, offline.body.id)).error).toMatch(/DEVICE_NOT_CONNECTED/);
    const failedJob = await call<Job>(token, "GET", `/api/jobs/${offline.body.id}`);
    expect(failedJob.body).toMatchObject({
      type: "dump",
      state: "failed",
      error: { message: expect.stringMatching(/DEVICE_NOT_CONNECTED/) },
    });
    const notReady = await call<{ code: string }>(token, "GET", `/api/devices/${devices[0]!.id}/dumps/${offline.body.id}`);
    expect(notReady.status).toBe(409);
    expect(notReady.body.code).toBe("DUMP_NOT_READY");

    const cases: [Parameters<typeof dumpingDevice>[1], RegExp][] = [
      [{ refuse: "INVALID_REQUEST: unknown request method" }, /could not make the dump: INVALID_REQUEST/],
      [{ size: 3 * 1024 * 1024 }, /more than TERN_DUMP_MAX_BYTES/],
      [{ sha256: "0".repeat(64) }, /SHA-256 does not match/],
    ];
    for (const [answer, reason] of cases) {
      const device = await dumpingDevice(randomBytes(1000), answer);
      const res = await call<DeviceDump>(token, "POST", `/api/devices/${device.id}/dump`);
      const dump = await settled(token, device.id, res.body.id);
      expect(dump.status).toBe("failed");
      expect(dump.error).toMatch(reason);
      const stored = await g.database.db
        .selectFrom("device_dumps")
        .select("content")
        .where("id", "=", dump.id)
        .executeTakeFirstOrThrow();
      expect(stored.content).toBeNull();
      device.raw.ws.close();
    }
  });

  it("keeps the newest TERN_DUMP_KEEP dumps of a device; viewers may not request, list or download", async () => {
    const token = await adminToken();
    const device = await dumpingDevice(randomBytes(2000));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call<DeviceDump>(token, "POST", `/api/devices/${device.id}/dump`);
      expect(res.status).toBe(202);
      await settled(token, device.id, res.body.id);
      ids.push(res.body.id);
    }
    const list = await call<DeviceDump[]>(token, "GET", `/api/devices/${device.id}/dumps`);
    expect(list.body.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect((await call(token, "GET", `/api/devices/${device.id}/dumps/${ids[0]}`)).status).toBe(404);

    const admin = await g.api();
    const invite = await admin.call<{ token?: string }>("POST", "/api/accesstokens", {
      body: { name: "viewer-key", role: "viewer" },
    });
    expect(invite.status).toBe(201);
    const viewerKey = invite.body.token!;
    for (const [method, path] of [
      ["POST", `/api/devices/${device.id}/dump`],
      ["GET", `/api/devices/${device.id}/dumps`],
      ["GET", `/api/devices/${device.id}/dumps/${ids[2]}`],
    ] as const) {
      const res = await call<{ code: string }>(viewerKey, method, path);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    device.raw.ws.close();
  });

  it("answers the pending dump while one is being made (200), and marks one its instance abandoned failed", async () => {
    const token = await adminToken();
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const id = devices[0]!.id;
    const pendingId = crypto.randomUUID();
    await g.database.db
      .insertInto("device_dumps")
      .values({ id: pendingId, organization_id: g.org.id, device_id: id, status: "pending", requested_by: "another instance" })
      .execute();
    const again = await call<DeviceDump>(token, "POST", `/api/devices/${id}/dump`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: pendingId, status: "pending" });

    // Older than any collection can take: its instance stopped.
    await g.database.db
      .updateTable("device_dumps")
      .set({ created_at: new Date(Date.now() - g.config.TERN_DUMP_TIMEOUT_MS - 11 * 60_000) })
      .where("id", "=", pendingId)
      .execute();
    const fresh = await call<DeviceDump>(token, "POST", `/api/devices/${id}/dump`);
    expect(fresh.status).toBe(202);
    expect(fresh.body.id).not.toBe(pendingId);
    const list = await call<DeviceDump[]>(token, "GET", `/api/devices/${id}/dumps`);
    expect(list.body.find((d) => d.id === pendingId)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^abandoned/),
    });
    const abandonedJob = await call<Job>(token, "GET", `/api/jobs/${pendingId}`);
    expect(abandonedJob.body).toMatchObject({
      type: "dump",
      state: "failed",
      error: { message: expect.stringMatching(/^abandoned/) },
    });
    await settled(token, id, fresh.body.id);
  });

  it("asks every device with a tag for a dump in one request: each collected on its own, an offline one failed, each a job", async () => {
    const token = await adminToken();
    const archive = randomBytes(2000);
    const a = await dumpingDevice(archive);
    const b = await dumpingDevice(archive);
    const { devices } = await g.fleet(1, { connect: false, queueConfig: false });
    const offline = devices[0]!.id;
    const ids = [a.id, b.id, offline];
    await g.database.db
      .updateTable("devices")
      .set({ tags: ["site-7"] })
      .where("id", "in", ids)
      .execute();
    const res = await fetch(`${g.server.url}/api/devices/dumps`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ filter: [{ key: "tags", op: "contains", val: "site-7" }] }),
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { dumps: DeviceDump[]; created: number };
    expect(body.created).toBe(3);
    expect(body.dumps.map((d) => d.device).sort()).toEqual([...ids].sort());
    for (const dump of body.dumps) {
      const done = await settled(token, dump.device, dump.id);
      expect(done.status).toBe(dump.device === offline ? "failed" : "complete");
      const job = await call<Job>(token, "GET", `/api/jobs/${dump.id}`);
      expect(job.body).toMatchObject({ type: "dump", state: dump.device === offline ? "failed" : "complete" });
    }
    // Unknown fields and a selection of nothing are refused before anything is asked.
    for (const bad of [{ filter: [], extra: true }, { filter: [{ key: "tags", op: "contains", val: "nowhere" }] }]) {
      const refused = await fetch(`${g.server.url}/api/devices/dumps`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(bad),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { code: string }).code).toBe("VALIDATION_FAILED");
    }
    for (const d of [a, b]) d.raw.ws.close();
  });
});
