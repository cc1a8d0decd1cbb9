/** Small DeviceConfig builders for namespace tests (not schema-checked: tests may probe faster than the schema allows). */
import type { ConfigInterface, ConfigTunnel, DeviceConfig } from "@tern/protocol";
import { emptyConfig } from "./configs.ts";

export function tunnel(
  over: Partial<ConfigTunnel> & Pick<ConfigTunnel, "id" | "localLoopback" | "remoteLoopback">,
): ConfigTunnel {
  return {
    num: 1,
    kind: "device",
    localInterface: "wan0",
    localAddress: null,
    remoteAddress: "192.0.2.1",
    ike: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 28800 },
    esp: { proposal: "aes256-sha256-modp2048", lifetimeSeconds: 3600, pfs: true },
    auth: { psk: "x", localId: "a", remoteId: "b" },
    initiator: true,
    dpdSeconds: 10,
    localSubnets: [],
    remoteSubnets: [],
    probeTargets: [over.remoteLoopback],
    pathLabel: null,
    ...over,
  };
}

export function wan(name: string, address: string, gateway: string, pathLabels: string[] = []): ConfigInterface {
  return { devId: `dev:${name}`, name, type: "WAN", dhcp: false, address, gateway, metric: 0, mtu: 1500, pathLabels };
}

export function labConfig(edit: (c: DeviceConfig) => void): DeviceConfig {
  const c = structuredClone(emptyConfig());
  edit(c);
  return c;
}
