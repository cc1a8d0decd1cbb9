import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";

describe("loadConfig", () => {
  it("has sensible defaults", () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 3000,
      HOST: "127.0.0.1",
      TERN_DATA_DIR: "./.tern-data",
      TERN_ACCESS_TOKEN_TTL: 300,
      TERN_REFRESH_TOKEN_TTL: 604_800,
      TERN_PASSWORD_HASH_COST: 17,
      TERN_TRUST_PROXY: false,
      TERN_PROBE_INTERVAL_MS: 200,
      TERN_PROBE_WINDOW: 300,
    });
  });

  it("names the bad variable", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL: must be a postgres/);
    expect(() => loadConfig({ TERN_SECRET_KEY: "c2hvcnQ=" })).toThrow(/TERN_SECRET_KEY: must be 32 bytes/);
    expect(() => loadConfig({ TERN_ADMIN_EMAIL: "admin" })).toThrow(/TERN_ADMIN_EMAIL/);
    expect(() => loadConfig({ TERN_ADMIN_PASSWORD: "short" })).toThrow(/TERN_ADMIN_PASSWORD/);
    expect(() => loadConfig({ TERN_TRUST_PROXY: "yes" })).toThrow(/TERN_TRUST_PROXY/);
    expect(() => loadConfig({ TERN_PASSWORD_HASH_COST: "4" })).toThrow(/TERN_PASSWORD_HASH_COST/);
    // The agent's own bounds of `monitoring` (protocol ConfigMonitoring): a config outside them would be refused there.
    expect(() => loadConfig({ TERN_PROBE_INTERVAL_MS: "50" })).toThrow(/TERN_PROBE_INTERVAL_MS/);
    expect(() => loadConfig({ TERN_PROBE_WINDOW: "601" })).toThrow(/TERN_PROBE_WINDOW/);
  });

  it("accepts a 32-byte base64 key and treats empty variables as unset", () => {
    const key = randomBytes(32).toString("base64");
    expect(loadConfig({ TERN_SECRET_KEY: key }).TERN_SECRET_KEY).toBe(key);
    const emptied = loadConfig({ PORT: "", DATABASE_URL: "" });
    expect(emptied.PORT).toBe(3000);
    expect(emptied.DATABASE_URL).toBeUndefined();
    expect(loadConfig({ TERN_TRUST_PROXY: "1" }).TERN_TRUST_PROXY).toBe(true);
  });
});
