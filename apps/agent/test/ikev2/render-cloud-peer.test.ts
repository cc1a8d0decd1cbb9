/** Peer tunnels for cloud gateways: the IKE version and the internet selector of a policy's `peer` action. */
import { describe, expect, it } from "vitest";
import { ikev2Paths } from "../../src/drivers/ikev2/paths.ts";
import { desiredPlumbing } from "../../src/drivers/ikev2/plumbing.ts";
import { renderIkev2 } from "../../src/drivers/ikev2/render.ts";
import { tunnel } from "../support/configs.ts";

const base = tunnel({
  id: "t-cloud",
  num: 3,
  kind: "peer",
  localLoopback: "10.100.0.6",
  remoteLoopback: "10.100.0.7",
  localSubnets: ["192.168.10.0/24"],
  remoteSubnets: ["10.250.0.0/24"],
  dpdSeconds: 15,
});
const render = (t: typeof base) =>
  renderIkev2([t], "libipsec", ikev2Paths("standalone", "/run/tern"), new Map([["wan0", "10.1.0.2"]])).conns[0]!.file.content;

describe("ikev2 render for cloud peers", () => {
  it("IKEv2 unless the tunnel says 1; DPD from the tunnel", () => {
    expect(render(base)).toMatch(/^ {4}version = 2$/m);
    expect(render({ ...base, ikeVersion: 1 })).toMatch(/^ {4}version = 1$/m);
    expect(render(base)).toMatch(/^ {4}dpd_delay = 15s$/m);
  });

  it("a tunnel carrying internet traffic adds 0.0.0.0/0 to the remote selector, but never routes it in main", () => {
    expect(render(base)).toMatch(/remote_ts = 10\.100\.0\.7\/32,10\.250\.0\.0\/24\n/);
    expect(render({ ...base, internet: true })).toMatch(/remote_ts = 10\.100\.0\.7\/32,10\.250\.0\.0\/24,0\.0\.0\.0\/0\n/);
    const routes = desiredPlumbing([{ ...base, internet: true }], "libipsec").routes.map((r) => r.dst);
    expect(routes).toEqual(["10.100.0.7/32", "10.250.0.0/24"]);
  });
});
