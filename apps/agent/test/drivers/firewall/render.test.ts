import { describe, expect, it } from "vitest";
import { FirewallDriver, type filterRuleLine, firewallInput, renderFirewall } from "../../../src/drivers/firewall/index.ts";
import { AgentError } from "../../../src/errors.ts";
import { emptyConfig, fullConfig, variant } from "../../support/configs.ts";

const rule = (over: Partial<Parameters<typeof filterRuleLine>[0]> = {}) => ({
  priority: 10,
  action: "allow" as const,
  interface: null,
  protocol: "tcp" as const,
  source: null,
  destination: null,
  ports: null,
  ...over,
});

describe("firewall render", () => {
  it("renders the full sample (golden)", async () => {
    const script = new FirewallDriver().render(fullConfig());
    await expect(script).toMatchFileSnapshot("./golden/valid-full.nft");
  });

  it("renders nothing for an empty section (teardown)", () => {
    expect(new FirewallDriver().render(emptyConfig())).toBeNull();
  });

  it("uses the tunnel devices it is given on the NAT side", () => {
    const script = new FirewallDriver().render(fullConfig(), ["xfrm-t1", "xfrm-t2"])!;
    expect(script).toContain(
      'oifname { "xfrm-t1", "xfrm-t2" } snat ip prefix to ip saddr map { 192.168.50.0/24 : 10.50.0.0/24 }',
    );
    expect(script).toContain(
      'iifname { "xfrm-t1", "xfrm-t2" } dnat ip prefix to ip daddr map { 10.50.0.0/24 : 192.168.50.0/24 }',
    );
  });

  it("answers ICMP echo before any user rule and never matches on the identifier", () => {
    const config = variant(fullConfig(), (c) => {
      c.firewall.inbound.push(rule({ priority: 0, action: "deny", protocol: "any" }));
    });
    const body = renderFirewall(firewallInput(config));
    const input = body.slice(body.indexOf("chain input"), body.indexOf("chain forward"));
    expect(input.indexOf("icmp type echo-request accept")).toBeGreaterThan(0);
    expect(input.indexOf("icmp type echo-request accept")).toBeLessThan(input.indexOf("inbound priority 0"));
    expect(body).not.toMatch(/icmp (id|sequence)/);
  });

  it("orders user rules by priority and maps fields", () => {
    const config = variant(fullConfig(), (c) => {
      c.firewall.inbound = [
        rule({ priority: 20, action: "deny", protocol: "any", ports: "80,443,8000-8080" }),
        rule({
          priority: 5,
          interface: "wan1",
          protocol: "udp",
          source: "10.0.0.0/8",
          destination: "192.168.50.0/24",
          ports: "53",
        }),
        rule({ priority: 7, protocol: "icmp" }),
      ];
    });
    const body = renderFirewall(firewallInput(config));
    const p5 = 'iifname "wan1" ip saddr 10.0.0.0/8 ip daddr 192.168.50.0/24 udp dport 53 accept comment "inbound priority 5"';
    const p7 = 'iifname { "wan0", "wan1" } meta l4proto icmp accept comment "inbound priority 7"';
    const p20 =
      'iifname { "wan0", "wan1" } meta l4proto { tcp, udp } th dport { 80, 443, 8000-8080 } drop comment "inbound priority 20"';
    expect(body.indexOf(p5)).toBeGreaterThan(0);
    expect(body.indexOf(p5)).toBeLessThan(body.indexOf(p7));
    expect(body.indexOf(p7)).toBeLessThan(body.indexOf(p20));
  });

  it("renders outbound rules on oifname in the forward chain only", () => {
    const body = renderFirewall(
      firewallInput(
        variant(fullConfig(), (c) => {
          c.firewall.outbound = [rule({ action: "deny", protocol: "tcp", ports: "25" })];
        }),
      ),
    );
    const line = 'oifname { "wan0", "wan1" } tcp dport 25 drop comment "outbound priority 10"';
    expect(body.indexOf(line)).toBeGreaterThan(body.indexOf("chain forward"));
    expect(body.split(line).length).toBe(2);
  });

  it.each([
    [
      "mismatched NAT prefix sizes",
      (c: ReturnType<typeof fullConfig>) => (c.firewall.lanNat[0]!.translated = "10.50.0.0/25"),
      "firewall.lanNat.0",
    ],
    ["a bad port", (c: ReturnType<typeof fullConfig>) => (c.firewall.inbound[0]!.ports = "22; drop"), "firewall.inbound.0.ports"],
    [
      "a reversed range",
      (c: ReturnType<typeof fullConfig>) => (c.firewall.inbound[0]!.ports = "90-80"),
      "firewall.inbound.0.ports",
    ],
    [
      "ports with icmp",
      (c: ReturnType<typeof fullConfig>) => {
        c.firewall.inbound[0]!.protocol = "icmp";
      },
      "firewall.inbound.0.ports",
    ],
  ])("rejects %s with a machine code and path", (_name, edit, path) => {
    const config = variant(fullConfig(), edit);
    const err = (() => {
      try {
        new FirewallDriver().render(config);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe("INVALID_CONFIG");
    expect((err as AgentError).path).toBe(path);
  });

  it("plans one file and one nft -f", () => {
    const plan = new FirewallDriver().plan(fullConfig(), { mode: "standalone", runDir: "/run/tern", stateDir: "/var/lib/tern" });
    expect(plan.files.map((f) => f.path)).toEqual(["tern.nft"]);
    expect(plan.commands).toEqual([["nft", "-f", "/run/tern/firewall/tern.nft"]]);
  });
});
