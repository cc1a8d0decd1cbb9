/**
 * The HTML of the troubleshooting page. No data is templated into the HTML:
 * the script fetches `/api/status` and fills the tables with textContent, so
 * nothing from the network is ever parsed as markup. Scripts and styles carry
 * the response's CSP nonce.
 */
const STYLE = `
body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1d2733;background:#f6f8fa}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
table{border-collapse:collapse;background:#fff;min-width:40%}
th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left}th{background:#eef1f4}
.up{color:#1a7f37;font-weight:600}.down{color:#cf222e;font-weight:600}
pre{background:#fff;border:1px solid #d0d7de;padding:.6rem;max-width:60rem;overflow:auto;min-height:2rem}
form.login{background:#fff;border:1px solid #d0d7de;padding:1rem;display:inline-block}
.error{color:#cf222e}button{margin-left:.3rem}`;

export function loginPage(nonce: string, error: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tern router – sign in</title>
<style nonce="${nonce}">${STYLE}</style></head><body>
<h1>Tern router troubleshooting</h1>
<form class="login" method="post" action="/login">
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" autofocus></label>
<button id="login-btn" type="submit">Sign in</button>
${error ? `<p class="error" id="login-error">${error === "bad" ? "Wrong password." : "Too many attempts, wait a moment."}</p>` : ""}
</form></body></html>`;
}

const SCRIPT = `
const $ = (id) => document.getElementById(id);
function table(id, headers, rows) {
  const t = $(id); t.replaceChildren();
  const h = t.insertRow(); for (const x of headers) { const th = document.createElement("th"); th.textContent = x; h.appendChild(th); }
  if (rows.length === 0) { const c = t.insertRow().insertCell(); c.colSpan = headers.length; c.textContent = "none"; return; }
  for (const r of rows) { const tr = t.insertRow(); for (const v of r) { const td = tr.insertCell();
    if (v && typeof v === "object") { td.textContent = v.text; td.className = v.cls; } else td.textContent = v ?? ""; } }
}
const state = (up) => ({ text: up ? "up" : "down", cls: up ? "up" : "down" });
const ms = (v) => (v == null ? "" : Number(v).toFixed(2) + " ms");
async function refresh() {
  const r = await fetch("/api/status", { credentials: "same-origin" });
  if (r.status === 401) { location.href = "/login"; return; }
  const s = await r.json();
  const c = s.connection;
  table("connection", ["server", "state", "since", "applied config", "last error"],
    [[c.server, { text: c.connected ? "connected" : "disconnected", cls: c.connected ? "up" : "down" }, c.since, c.appliedHash ? c.appliedHash.slice(0, 12) : "none", c.lastError]]);
  table("interfaces", ["name", "state", "IPv4", "gateway", "MTU", "rx bytes", "tx bytes"],
    s.interfaces.map((i) => [i.name, state(i.operState === "up"), i.IPv4 + (i.IPv4Mask != null ? "/" + i.IPv4Mask : ""), i.gateway, i.mtu, i.rxBytes, i.txBytes]));
  table("tunnels", ["tunnel", "state", "loss", "RTT (window mean)", "RTT (smoothed)", "jitter", "samples"],
    s.tunnels.map((t) => [t.name || t.id, state(t.up), t.loss + " %", ms(t.rtt), ms(t.srttMs), ms(t.jitter), t.samples]));
  table("bgp", ["neighbor", "remote ASN", "state", "up (s)", "prefixes in", "prefixes out"],
    (s.bgp ? s.bgp.neighbors : []).map((n) => [n.ip, n.remoteASN, state(n.state === "Established"), n.uptimeSeconds, n.prefixesReceived, n.prefixesSent]));
  table("vrrp", ["group", "state", "since"], s.vrrp.map((v) => [v.groupId, v.state, v.since]));
  table("errors", ["time", "error"], s.errors.map((e) => [e.at, e.message]));
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
}
async function diag(kind) {
  const out = $("diag-output");
  out.textContent = kind + " " + $("diag-target").value + " …";
  const r = await fetch("/api/" + kind, { method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "x-tern-ui": "1" }, body: JSON.stringify({ target: $("diag-target").value }) });
  const body = await r.json();
  out.textContent = r.ok ? body.output : "error: " + body.error;
}
$("ping-btn").addEventListener("click", () => diag("ping"));
$("traceroute-btn").addEventListener("click", () => diag("traceroute"));
refresh(); setInterval(refresh, 3000);`;

export function mainPage(nonce: string): string {
  const section = (id: string, title: string) => `<h2>${title}</h2><table id="${id}"></table>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tern router troubleshooting</title>
<style nonce="${nonce}">${STYLE}</style></head><body>
<h1>Tern router troubleshooting <small id="updated"></small></h1>
<form method="post" action="/logout"><button id="logout-btn" type="submit">Sign out</button></form>
${section("connection", "Connection to the server")}
${section("interfaces", "Interfaces")}
${section("tunnels", "Tunnels")}
${section("bgp", "BGP neighbors")}
${section("vrrp", "VRRP")}
${section("errors", "Recent errors")}
<h2>Diagnostics</h2>
<label>Target IPv4 <input id="diag-target" value=""></label>
<button id="ping-btn" type="button">Ping</button><button id="traceroute-btn" type="button">Traceroute</button>
<pre id="diag-output"></pre>
<script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}
