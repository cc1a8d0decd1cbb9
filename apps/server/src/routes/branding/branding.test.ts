/**
 * Branding: public reads, installation administrators' writes, logo uploads
 * (PNG by signature, SVG sanitized), sizes and types refused with clear codes.
 */
import type { Branding } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string };
const t = useTestServer();

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(
    "0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
    "hex",
  ),
]);
const EVIL_SVG = `<?xml version="1.0"?>
<!DOCTYPE svg [<!ENTITY boom "evil.example">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onload="alert(1)">
  <script>alert(2)</script>
  <a xlink:href="javascript:alert(3)"><rect width="10" height="10" fill="#0b7285" onclick="alert(4)"/></a>
  <style>rect { fill: url(https://evil.example/x) }</style>
  <image href="https://evil.example/pixel.png" width="1" height="1"/>
  <use xlink:href="https://evil.example/sprite.svg#a"/><use href="#r"/>
  <foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"></iframe></foreignObject>
</svg>`;

const upload = (bytes: Uint8Array, type: string, token = t.admin.token) =>
  t.api<Branding & ErrorBody>("PUT", "/api/branding/logo", { token, bytes, headers: { "content-type": type } });

describe("branding", () => {
  it("answers defaults without signing in, and an administrator's changes after", async () => {
    const before = await t.api<Branding>("GET", "/api/branding");
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ productName: "Tern", accentColor: "#0b7285", logoUrl: null });
    const put = await t.api<Branding>("PUT", "/api/branding", {
      token: t.admin.token,
      body: { productName: "Acme WAN", accentColor: "#AA3300" },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ productName: "Acme WAN", accentColor: "#aa3300" });
    expect((await t.api<Branding>("GET", "/api/branding")).body.productName).toBe("Acme WAN");
  });

  it("refuses a bad colour, an empty name and unknown fields with 400 VALIDATION_FAILED", async () => {
    for (const body of [{ accentColor: "red" }, { productName: "" }, { productName: "x", logo: "y" }]) {
      const res = await t.api<ErrorBody>("PUT", "/api/branding", { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it("a script-bearing SVG comes back without scripts, handlers or foreign content, served inert", async () => {
    const res = await upload(Buffer.from(EVIL_SVG), "image/svg+xml");
    expect(res.status, res.text).toBe(200);
    expect(res.body.logoUrl).toMatch(/^\/api\/branding\/logo\?v=\d+$/);
    const logo = await t.api("GET", res.body.logoUrl!);
    expect(logo.status).toBe(200);
    expect(logo.headers.get("content-type")).toBe("image/svg+xml");
    expect(logo.headers.get("x-content-type-options")).toBe("nosniff");
    expect(logo.headers.get("content-security-policy")).toMatch(/default-src 'none'.*sandbox/);
    expect(logo.headers.get("cache-control")).toMatch(/immutable/);
    expect(logo.text).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(logo.text).toContain("<rect");
    expect(logo.text).toContain('<use href="#r"');
    for (const bad of [
      "<script",
      "alert",
      "onload",
      "onclick",
      "javascript:",
      "foreignObject",
      "iframe",
      "evil",
      "<style",
      "<image",
      "ENTITY",
    ])
      expect(logo.text).not.toContain(bad);
    // Without the current version it is revalidated.
    expect((await t.api("GET", "/api/branding/logo")).headers.get("cache-control")).toBe("no-cache");
  });

  it("a PNG is stored as is; a new upload changes the URL's version", async () => {
    const first = await upload(PNG, "image/png");
    expect(first.status, first.text).toBe(200);
    const again = await upload(PNG, "image/png");
    expect(again.body.logoUrl).not.toBe(first.body.logoUrl);
    const logo = await t.app.request(again.body.logoUrl!);
    expect(logo.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await logo.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("refuses wrong types (415), a PNG without its signature (415), oversize (413) and an empty body (400)", async () => {
    const cases: [Uint8Array, string, number, string][] = [
      [PNG, "image/gif", 415, "UNSUPPORTED_MEDIA_TYPE"],
      [Buffer.from("{}"), "application/json", 415, "UNSUPPORTED_MEDIA_TYPE"],
      [Buffer.from("GIF89a not a png"), "image/png", 415, "UNSUPPORTED_MEDIA_TYPE"],
      [Buffer.from("<html><body>hi</body></html>"), "image/svg+xml", 415, "UNSUPPORTED_MEDIA_TYPE"],
      [Buffer.from("<svg><script>alert(1)</script></svg><svg></svg>"), "image/svg+xml", 415, "UNSUPPORTED_MEDIA_TYPE"],
      [Buffer.concat([PNG, Buffer.alloc(256 * 1024)]), "image/png", 413, "PAYLOAD_TOO_LARGE"],
      [new Uint8Array(0), "image/png", 400, "VALIDATION_FAILED"],
    ];
    const before = (await t.api<Branding>("GET", "/api/branding")).body.logoUrl;
    for (const [bytes, type, status, code] of cases) {
      const res = await upload(bytes, type);
      expect(res.status, `${type} ${bytes.length} bytes: ${res.text}`).toBe(status);
      expect(res.body.code).toBe(code);
    }
    expect((await t.api<Branding>("GET", "/api/branding")).body.logoUrl).toBe(before);
  });

  it("viewers, managers, keys and other tenants' owners cannot change it; DELETE removes the logo", async () => {
    const viewer = await t.addMember("viewer");
    const accountManager = await t.addMember("manager", { scope: "account" });
    const other = await t.createTenant("Elsewhere");
    for (const token of [viewer.token, accountManager.token, other.token]) {
      const res = await t.api<ErrorBody>("PUT", "/api/branding", { token, body: { productName: "Hijacked" } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
      const logo = await upload(PNG, "image/png", token);
      expect(logo.status).toBe(403);
      const del = await t.api<ErrorBody>("DELETE", "/api/branding/logo", { token });
      expect(del.status).toBe(403);
    }
    expect((await t.api<Branding>("GET", "/api/branding")).body.productName).not.toBe("Hijacked");
    const del = await t.api<Branding>("DELETE", "/api/branding/logo", { token: t.admin.token });
    expect(del.status).toBe(200);
    expect(del.body.logoUrl).toBeNull();
    const gone = await t.api<ErrorBody>("GET", "/api/branding/logo");
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe("NOT_FOUND");
  });
});
