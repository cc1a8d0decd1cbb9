/** Server key, derived keys, at-rest encryption, password hashing and opaque tokens. */
import { randomBytes } from "node:crypto";
import { mkdtemp as makeTemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/auth/password.ts";
import { hashSecretToken, newSecretToken } from "../../src/auth/secret-tokens.ts";
import { createKeyring } from "../../src/secrets/keyring.ts";
import { loadServerKey } from "../../src/secrets/server-key.ts";

const temps: string[] = [];
async function mkdtemp(prefix: string): Promise<string> {
  const dir = await makeTemp(prefix);
  temps.push(dir);
  return dir;
}
afterAll(() => Promise.all(temps.map((d) => rm(d, { recursive: true, force: true }))));

describe("server key", () => {
  it("is generated once into <data dir>/secret.key with mode 0600, then reused", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "tern-key-"));
    const first = await loadServerKey({ dataDir: dir });
    expect(first.source).toBe("generated");
    expect(first.key).toHaveLength(32);
    expect((await stat(path.join(dir, "secret.key"))).mode & 0o777).toBe(0o600);
    const second = await loadServerKey({ dataDir: dir });
    expect(second.source).toBe("file");
    expect(second.key.equals(first.key)).toBe(true);
  });

  it("TERN_SECRET_KEY wins over the file; a corrupt file stops start-up", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "tern-key-"));
    const given = randomBytes(32);
    const fromEnv = await loadServerKey({ dataDir: dir, secretKey: given.toString("base64") });
    expect(fromEnv).toMatchObject({ source: "environment" });
    expect(fromEnv.key.equals(given)).toBe(true);
    await writeFile(path.join(dir, "secret.key"), "too short\n");
    await expect(loadServerKey({ dataDir: dir })).rejects.toThrow(/32 bytes/);
  });

  it("two starts racing on an empty data dir agree on one key", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "tern-key-"));
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadServerKey({ dataDir: dir })));
    const a = keys[0]!;
    for (const k of keys) expect(k.key.equals(a.key)).toBe(true);
    expect(keys.filter((k) => k.source === "generated")).toHaveLength(1);
    expect((await readFile(path.join(dir, "secret.key"), "utf8")).trim()).toBe(a.key.toString("base64"));
    // No temporary file is left behind by the losers.
    expect(await readdir(dir)).toEqual(["secret.key"]);
  });
});

describe("keyring", () => {
  const key = randomBytes(32);
  const ring = createKeyring(key);

  it("encrypts with AES-256-GCM: round trip, fresh IV each time, bound to its context", () => {
    const a = ring.encrypt("pre-shared key", "peer:1");
    const b = ring.encrypt("pre-shared key", "peer:1");
    expect(a).not.toBe(b);
    expect(a).not.toContain("pre-shared");
    expect(ring.decrypt(a, "peer:1")).toBe("pre-shared key");
    expect(() => ring.decrypt(a, "peer:2")).toThrow();
    const tampered = `${a.slice(0, -3)}${a.endsWith("AAA") ? "BBB" : "AAA"}`;
    expect(() => ring.decrypt(tampered, "peer:1")).toThrow();
    expect(() => ring.decrypt("plain text", "peer:1")).toThrow(/not an encrypted value/);
  });

  it("derives the same keys from the same server key (several instances), different ones otherwise", () => {
    const same = createKeyring(Buffer.from(key));
    expect(same.jwtKey).toBe(ring.jwtKey);
    expect(same.decrypt(ring.encrypt("x"))).toBe("x");
    const other = createKeyring(randomBytes(32));
    expect(other.jwtKey).not.toBe(ring.jwtKey);
    expect(() => other.decrypt(ring.encrypt("x"))).toThrow();
    // The JWT key is not the server key itself.
    expect(Buffer.from(ring.jwtKey, "base64url").equals(key)).toBe(false);
  });
});

describe("passwords", () => {
  it("scrypt hashes carry their parameters, use a salt and verify", async () => {
    const a = await hashPassword("correct horse", 10);
    const b = await hashPassword("correct horse", 10);
    expect(a).toMatch(/^scrypt\$10\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse", a)).toBe(true);
    expect(await verifyPassword("Correct horse", a)).toBe(false);
    expect(await verifyPassword("correct horse", "garbage")).toBe(false);
    expect(await verifyPassword("x", "scrypt$99$8$1$aa$bb")).toBe(false);
  });

  it("a hash made at another cost still verifies", async () => {
    const old = await hashPassword("pw with cost 11", 11);
    expect(await verifyPassword("pw with cost 11", old)).toBe(true);
  });
});

describe("opaque tokens", () => {
  it("have 256 bits, a prefix, and a stable one-way hash", () => {
    const token = newSecretToken("tern_at_");
    expect(token).toMatch(/^tern_at_[\w-]{43}$/);
    expect(newSecretToken("tern_at_")).not.toBe(token);
    expect(hashSecretToken(token)).toBe(hashSecretToken(token));
    expect(hashSecretToken(token)).not.toContain(token.slice(8));
  });
});
