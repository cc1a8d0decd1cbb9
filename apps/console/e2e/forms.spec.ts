/**
 * The console's forms in a real browser against the shared stack
 * (support/stack.ts): peer connections created, refused and edited through
 * the form, a viewer without write controls, switching organizations from
 * the header, and two-factor sign-in enrolled on the account page and then
 * used at sign-in (a code computed with otplib, then a recovery code).
 * One simulated router of this file's own (indexes from 2000, past the
 * stack's and the pages spec's) carries the peer connection.
 */
import { expect, type Page, test } from "@playwright/test";
import { createTernClient, ok, type TernClient } from "@tern/client";
import type { Simulator } from "@tern/test-harness/src/simulator/index.ts";
import { generate } from "otplib";
import { hasChromium, missingChromium } from "./support/browser.ts";
import { diagnoseFailures } from "./support/diagnose.ts";
import { signIn } from "./support/fixtures.ts";
import { checkBothThemes } from "./support/page-check.ts";
import { enrolRouters } from "./support/routers.ts";
import { stackInfo } from "./support/stack-info.ts";

diagnoseFailures();

test.skip(!hasChromium, missingChromium);
test.describe.configure({ mode: "serial" });

let api: TernClient;
let fleet: Simulator;
let router: { id: string; name: string };
const peerName = `aws-vgw-${Date.now().toString(36)}`;
/** The viewer's 2FA while it is on, so that afterAll can turn it off again if a test stopped half-way. */
const twoFactor: { secret: string | null; unused: string[] } = { secret: null, unused: [] };

test.beforeAll(async () => {
  if (!hasChromium) return;
  const s = stackInfo();
  api = createTernClient({ baseUrl: s.apiUrl, org: s.orgId });
  await api.login(s.admin.email, s.admin.password);
  // Past the stack's routers (0…) and the pages spec's (1000…).
  const enrolled = await enrolRouters(api, { name: "e2e forms router", count: 1, startIndex: 2000, machinePrefix: "forms" });
  fleet = enrolled.fleet;
  router = enrolled.routers[0]!;
});

test.afterAll(async () => {
  // The stack is shared with the other spec files: the peer, its tunnel and the router go again.
  if (api) {
    const tunnels = await ok(api.api.GET("/api/tunnels", { params: { query: { response: "summary" } } })).catch(() => []);
    for (const t of tunnels.filter((t) => t.peer?.name === peerName))
      await ok(api.api.DELETE("/api/tunnels/{id}", { params: { path: { id: t.id } } })).catch(() => {});
    for (const p of (await ok(api.api.GET("/api/peers")).catch(() => [])).filter((p) => p.name === peerName))
      await ok(api.api.DELETE("/api/peers/{id}", { params: { path: { id: p.id } } })).catch(() => {});
  }
  await fleet?.stop().catch(() => {});
  if (router) await ok(api.api.DELETE("/api/devices/{id}", { params: { path: { id: router.id } } })).catch(() => {});
  if (twoFactor.secret) await turnOffTwoFactor(stackInfo().viewer);
});

async function choose(page: Page, label: RegExp, option: string | RegExp) {
  await page.getByRole("combobox", { name: label }).click();
  await page.getByRole("option", { name: option }).first().click();
}

const peerRow = (page: Page, name: string) => page.getByTestId("peer-row").filter({ hasText: name });

test("creates a peer connection through the form and sees it listed with its status", async ({ page }) => {
  test.setTimeout(90_000);
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.getByRole("link", { name: "Peers" }).click();
  await page.getByRole("button", { name: "New peer connection" }).click();
  const form = page.getByRole("dialog", { name: "New peer connection" });
  // The AWS preset fills the proposals (shown in their summary) and shows its source note with the vendor's page.
  await choose(page, /^Preset/, "AWS Site-to-Site VPN");
  await expect(form.getByTestId("preset-note")).toContainText("IKEv2 chosen");
  await expect(form.getByRole("link", { name: /AWS Site-to-Site VPN documentation/ })).toHaveAttribute(
    "href",
    "https://docs.aws.amazon.com/vpn/latest/s2svpn/VPNTunnels.html",
  );
  await form.getByLabel("Name").fill(peerName);
  await form.getByLabel("Remote endpoint").fill("203.0.113.20");
  await choose(page, /^Device/, router.name);
  await choose(page, /^WAN interface/, /eth0/);
  await form.getByLabel("Remote id", { exact: true }).fill("203.0.113.20");
  const psk = `psk-${Date.now()}-secret`;
  await form.getByLabel("Pre-shared key").fill(psk);
  await form.getByLabel("Remote LAN subnets").fill("10.250.0.0/16");
  await form.getByLabel("Remote LAN subnets").press("Enter");
  await form.getByLabel("Health-check targets").fill("10.250.0.1");
  await form.getByLabel("Health-check targets").press("Enter");
  await form.getByRole("button", { name: /^Proposals/ }).click();
  await expect(form.getByRole("combobox", { name: "IKE encryption" })).toHaveValue("aes-cbc");
  await expect(form.getByLabel("IKE lifetime (s)")).toHaveValue("28800");
  await expect(form.getByLabel("Perfect forward secrecy on ESP rekeys")).toBeChecked();
  // The modal scrolled down to the proposals: back to its top, so the screenshot shows the preset and its note.
  await form.evaluate((dialog) => dialog.scrollTo(0, 0));
  await checkBothThemes(page, "forms-peer-form");
  await form.getByRole("button", { name: "Create peer" }).click();
  await expect(form).toHaveCount(0);
  const row = peerRow(page, peerName);
  await expect(row).toContainText("203.0.113.20");
  await expect(row).toContainText(`from ${router.name}`);
  await expect(row.getByText("set", { exact: true })).toBeVisible();
  // The status shown is the tunnel's status as the API has it, kept fresh without a reload (live events, and
  // a poll every 10 s: see the peers page).
  const apiStatus = async () => {
    const tunnels = await ok(api.api.GET("/api/tunnels", { params: { query: { response: "summary" } } }));
    return tunnels.find((t) => t.peer?.name === peerName)?.status ?? "none";
  };
  await expect
    .poll(
      async () => {
        const [status, shown] = [await apiStatus(), (await row.getByRole("cell").nth(4).textContent()) ?? ""];
        return shown.startsWith(status) ? status : `${status} (API) ≠ ${shown} (page)`;
      },
      { timeout: 25_000 },
    )
    .toMatch(/^(Connected|Not Connected|Pending|N\/A)$/);
  await checkBothThemes(page, "forms-peers");
  // The key is write-only: neither the list nor the edit form has it.
  await row.getByRole("button", { name: `Edit peer ${peerName}` }).click();
  const edit = page.getByRole("dialog", { name: `Edit peer ${peerName}` });
  await expect(edit.getByLabel("Pre-shared key")).toHaveValue("");
  await expect(edit.getByRole("combobox", { name: "Preset" })).toHaveValue("AWS Site-to-Site VPN");
  expect(await page.content()).not.toContain(psk);
  const [stored] = await ok(
    api.api.GET("/api/peers", { params: { query: { filter: JSON.stringify([{ key: "name", op: "==", val: peerName }]) } } }),
  );
  expect(stored).toMatchObject({ remoteIP: "203.0.113.20", remoteTrafficSelectors: ["10.250.0.0/16"], ips: ["10.250.0.1"] });
  // The AWS preset's values (packages/protocol/src/peer-presets.ts), stored with its name.
  expect(stored).toMatchObject({
    pskSet: true,
    preset: "aws-site-to-site",
    ikeVersion: 2,
    ikeCryptoAlg: "aes-cbc",
    ikeKeySize: 256,
    ikeIntegAlg: "sha256",
    ikeDhGroup: "modp2048",
    espCryptoAlg: "aes-cbc",
    espKeySize: 256,
    espIntegAlg: "sha256",
    espDhGroup: "modp2048",
    pfs: true,
    ikeLifeTime: 28800,
    sessionLifeTime: 3600,
    dpdDelay: 10,
  });
});

test("a field the API refuses shows its error and code on that field; nothing is created", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/peers`);
  await page.getByRole("button", { name: "New peer connection" }).click();
  const form = page.getByRole("dialog", { name: "New peer connection" });
  await form.getByLabel("Name").fill("refused-peer");
  await form.getByLabel("Remote endpoint").fill("300.1.2.3");
  await choose(page, /^Device/, router.name);
  await choose(page, /^WAN interface/, /eth0/);
  await form.getByLabel("Pre-shared key").fill("short");
  await form.getByLabel("Remote LAN subnets").fill("10.251.0.0/16");
  await form.getByLabel("Remote LAN subnets").press("Enter");
  await form.getByRole("button", { name: "Create peer" }).click();
  // Mantine links each field to its error with aria-describedby: the message is the field's description.
  await expect(form.getByLabel("Remote endpoint")).toHaveAccessibleDescription(/VALIDATION_FAILED/);
  await expect(form.getByLabel("Pre-shared key")).toHaveAccessibleDescription(/8 characters.*VALIDATION_FAILED/);
  await expect(form.getByLabel("Name")).not.toHaveAttribute("aria-invalid", "true");
  await checkBothThemes(page, "forms-peer-form-refused");
  // Corrected, then refused again by name: a conflict goes on the name.
  await form.getByLabel("Remote endpoint").fill("203.0.113.30");
  await form.getByLabel("Pre-shared key").fill("long-enough-key");
  await form.getByLabel("Name").fill(peerName);
  await form.getByRole("button", { name: "Create peer" }).click();
  await expect(form.getByLabel("Name")).toHaveAccessibleDescription(/CONFLICT/);
  await form.getByRole("button", { name: "Cancel" }).click();
  const names = (await ok(api.api.GET("/api/peers"))).map((p) => p.name);
  expect(names).not.toContain("refused-peer");
  expect(names.filter((n) => n === peerName)).toHaveLength(1);
});

test("edits a peer: the key is kept when left empty", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/peers`);
  await peerRow(page, peerName)
    .getByRole("button", { name: `Edit peer ${peerName}` })
    .click();
  const edit = page.getByRole("dialog", { name: `Edit peer ${peerName}` });
  await edit.getByLabel("Remote LAN subnets").fill("10.252.0.0/24");
  await edit.getByLabel("Remote LAN subnets").press("Enter");
  await edit.getByRole("button", { name: "Save peer" }).click();
  await expect(edit).toHaveCount(0);
  const [stored] = await ok(
    api.api.GET("/api/peers", { params: { query: { filter: JSON.stringify([{ key: "name", op: "==", val: peerName }]) } } }),
  );
  expect(stored).toMatchObject({
    remoteTrafficSelectors: ["10.250.0.0/16", "10.252.0.0/24"],
    pskSet: true,
    preset: "aws-site-to-site",
    ikeLifeTime: 28800,
  });
});

test("a viewer sees the peers with their status and no write control", async ({ page }) => {
  const s = stackInfo();
  await signIn(page, s.viewer);
  await page.goto(`${s.consoleUrl}/peers`);
  await expect(peerRow(page, peerName)).toContainText(/Connected|Pending|N\/A/);
  await expect(page.getByRole("button", { name: "New peer connection" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^(Edit|Delete) peer/ })).toHaveCount(0);
});

test("switches organizations from the header: every page then acts in the one chosen", async ({ page }) => {
  const s = stackInfo();
  const other = await ok(api.api.POST("/api/organizations", { body: { name: `Forms lab ${Date.now().toString(36)}` } }));
  await signIn(page, s.admin);
  await page.goto(`${s.consoleUrl}/peers`);
  await expect(peerRow(page, peerName)).toBeVisible();
  const switcher = page.getByRole("combobox", { name: "Organization" });
  await switcher.click();
  await page.getByRole("option", { name: new RegExp(other.name) }).click();
  await expect(switcher).toHaveValue(new RegExp(other.name));
  await expect(page.getByText("No peers yet")).toBeVisible();
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page.getByText(/No devices/i).first()).toBeVisible();
  // From a device's page, switching leads to the devices of the organization chosen (the device is not one of them).
  await switcher.click();
  await page.getByRole("option").filter({ hasNotText: other.name }).first().click();
  await page.goto(`${s.consoleUrl}/devices/${router.id}`);
  await expect(page.getByRole("heading", { name: router.name })).toBeVisible();
  await switcher.click();
  await page.getByRole("option", { name: new RegExp(other.name) }).click();
  await expect(page).toHaveURL(/\/devices$/);
  await expect(page.getByText(/No devices/i).first()).toBeVisible();
  // Remembered across a reload; switching back shows the first organization's fleet again.
  await page.reload();
  await expect(page.getByRole("combobox", { name: "Organization" })).toHaveValue(new RegExp(other.name));
  await page.getByRole("combobox", { name: "Organization" }).click();
  await page.getByRole("option").filter({ hasNotText: other.name }).first().click();
  await expect(page.getByTestId("device-row").first()).toBeVisible();
  await page.getByRole("link", { name: "Peers" }).click();
  await expect(peerRow(page, peerName)).toBeVisible();
  await ok(api.api.DELETE("/api/organizations/{id}", { params: { path: { id: other.id } } })).catch(() => {});
});

test("enrols two-factor sign-in, then signs in with a code and with a recovery code", async ({ page }) => {
  const s = stackInfo();
  const who = s.viewer;
  await signIn(page, who);
  await page.goto(`${s.consoleUrl}/account`);
  const section = page.getByRole("region", { name: "Two-factor sign-in" });
  await section.getByLabel("Your password").fill(who.password);
  await section.getByRole("button", { name: "Set up two-factor sign-in" }).click();
  await expect(section.getByRole("img", { name: /QR code/ })).toBeVisible();
  const secret = (await section.getByTestId("mfa-secret").getAttribute("data-secret")) ?? "";
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  await checkBothThemes(page, "forms-account-2fa-qr");
  await section.getByLabel("Code from the app").fill(await generate({ secret }));
  await section.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
  const list = section.getByRole("list", { name: "Recovery codes" });
  await expect(list.getByRole("listitem")).toHaveCount(10);
  const codes = (await list.getByRole("listitem").allTextContents()).map((c) => c.trim());
  twoFactor.secret = secret;
  twoFactor.unused = [...codes];
  const download = page.waitForEvent("download");
  await section.getByRole("button", { name: "Download" }).click();
  expect((await download).suggestedFilename()).toMatch(/recovery-codes\.txt$/);
  await checkBothThemes(page, "forms-account-2fa-codes");
  await section.getByRole("button", { name: "I have saved them" }).click();
  await expect(section.getByTestId("mfa-state")).toContainText("10 recovery codes left");
  // The secret and the codes were shown once: not on the page any more.
  expect(await page.content()).not.toContain(secret);
  expect(await page.content()).not.toContain(codes[0]!);

  // Sign in again: the password, then the code of the next time step (the confirmation used this one).
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("E-mail").fill(who.email);
  await page.getByRole("textbox", { name: "Password", exact: true }).fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  const code = page.getByLabel("Authentication code");
  await expect(code).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Password", exact: true })).toHaveCount(0);
  await checkBothThemes(page, "forms-signin-2fa");
  await code.fill("000000");
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByRole("alert")).toContainText("MFA_PROOF_INVALID");
  await code.fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  await page.getByRole("button", { name: "Verify" }).click();
  // Signed in, back on the page the sign-out left.
  await expect(page.getByRole("heading", { name: "Account", level: 1 })).toBeVisible();

  // And with a recovery code instead of the app.
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("E-mail").fill(who.email);
  await page.getByRole("textbox", { name: "Password", exact: true }).fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Use a recovery code instead" }).click();
  const recovery = twoFactor.unused.shift()!;
  await page.getByLabel("Recovery code").fill(recovery);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByRole("heading", { name: "Account", level: 1 })).toBeVisible();

  // Turned off on the account page with the password and a recovery code: the password alone signs in again.
  await page.goto(`${s.consoleUrl}/account`);
  await expect(section.getByTestId("mfa-state")).toContainText("9 recovery codes left");
  await checkBothThemes(page, "forms-account-2fa-on");
  await section.getByLabel("Your password").fill(who.password);
  await section.locator(`label[for$="-recoveryCode"]`).click();
  await section.getByRole("textbox", { name: "Recovery code" }).fill(twoFactor.unused.shift()!);
  await section.getByRole("button", { name: "Turn off two-factor sign-in" }).click();
  await expect(section.getByRole("button", { name: "Set up two-factor sign-in" })).toBeVisible();
  twoFactor.secret = null;
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await signIn(page, who);
});

/** Cleanup after a failed run: the viewer is shared with the other spec files, which sign in with the password alone. */
async function turnOffTwoFactor(who: { email: string; password: string }) {
  const base = stackInfo().apiUrl;
  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const login = (await (await post("/api/users/login", { username: who.email, password: who.password })).json()) as {
    challenge?: string;
    accessToken?: string;
  };
  let token = login.accessToken;
  if (login.challenge) {
    const done = await post("/api/users/login/mfa", { challenge: login.challenge, recoveryCode: twoFactor.unused.shift() });
    token = ((await done.json()) as { accessToken: string }).accessToken;
  }
  await post("/api/users/me/mfa/disable", { password: who.password, recoveryCode: twoFactor.unused.shift() }, token);
}
