/** validateVrrpGroup, table-driven over edge-a and edge-c sharing 192.168.50.0/24. */
import { DhcpServer } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { type VrrpGroupCheck, validateVrrpGroup } from "../../src/validate/index.ts";
import { edgeA, edgeB, edgeC, id, vrrpGroup } from "../compile/fixtures.ts";

type Editable = VrrpGroupCheck & { group: ReturnType<typeof vrrpGroup> };

function check(edit: (c: Editable) => void = () => {}) {
  const c = {
    group: structuredClone(vrrpGroup()),
    groupId: id(0x801),
    devices: [edgeA(), edgeB(), edgeC()],
    otherGroups: [
      { id: id(0x801), name: "lan-ha (itself)", virtualRouterId: 51 },
      { id: id(0x802), name: "guests", virtualRouterId: 60 },
    ],
  };
  edit(c);
  return validateVrrpGroup(c).map((p) => `${p.code} ${p.path}`);
}
const V = (path: string) => `VALIDATION_FAILED ${path}`;
const member = (c: { group: ReturnType<typeof vrrpGroup> }, i: number) => c.group.devices[i]!;

describe("validateVrrpGroup", () => {
  it("accepts the sample group (it does not conflict with its own stored id)", () => expect(check()).toEqual([]));

  it.each([
    [
      "virtual router id used by another group",
      (c) => {
        c.group.virtualRouterId = 60;
      },
      ["CONFLICT virtualRouterId"],
    ],
    [
      "a new group reusing the id of the stored one",
      (c) => {
        c.groupId = undefined;
      },
      ["CONFLICT virtualRouterId"],
    ],
    [
      "member device that does not exist",
      (c) => {
        member(c, 1).device = id(0x999);
      },
      [V("devices.1.device")],
    ],
    [
      "member twice",
      (c) => {
        member(c, 1).device = id(1);
      },
      [V("devices.1.device"), V("devices.1.interface")],
    ],
    [
      "member interface that does not exist",
      (c) => {
        member(c, 1).interface = "nope";
      },
      [V("devices.1.interface")],
    ],
    [
      "member interface that is a WAN",
      (c) => {
        member(c, 1).interface = "mac:02:00:00:00:0c:01";
      },
      [V("devices.1.interface")],
    ],
    // Outside edge-a's and edge-c's subnet: one problem per member.
    [
      "virtual IP outside the members' subnet",
      (c) => {
        c.group.virtualIp = "192.168.51.1";
      },
      [V("virtualIp"), V("virtualIp")],
    ],
    [
      "virtual IP is a member's own address",
      (c) => {
        c.group.virtualIp = "192.168.50.3";
      },
      [V("virtualIp")],
    ],
    [
      "virtual IP is the broadcast address",
      (c) => {
        c.group.virtualIp = "192.168.50.255";
      },
      [V("virtualIp"), V("virtualIp")],
    ],
    // edge-a's DHCP range is .100-.199; edge-c's is .200-.220.
    [
      "virtual IP inside a member's DHCP range",
      (c) => {
        c.group.virtualIp = "192.168.50.150";
      },
      [V("virtualIp")],
    ],
    [
      "virtual IP reserved for a DHCP client",
      (c) => {
        c.group.virtualIp = "192.168.50.20";
      },
      [V("virtualIp")],
    ],
    [
      "members on different subnets",
      (c) =>
        Object.assign(member(c, 1), {
          device: id(2),
          interface: "mac:02:00:00:00:0b:02",
          trackInterfacesOptional: ["mac:02:00:00:00:0b:01"],
        }),
      // edge-b's LAN is 192.168.60.0/24: the VIP is outside it and it is another segment.
      [V("virtualIp"), V("devices.1.interface")],
    ],
    [
      "tracked interface that does not exist",
      (c) => {
        member(c, 1).trackInterfacesMandatory.push("gone");
      },
      [V("devices.1.trackInterfacesMandatory.0")],
    ],
  ] satisfies [string, (c: Editable) => void, string[]][])("%s", (_n, edit, expected) => {
    expect(check(edit)).toEqual(expected);
  });

  it("refuses two members with the same address", () => {
    const twin = { ...edgeC(), id: id(0x33), name: "edge-c2" };
    const problems = validateVrrpGroup({
      group: {
        ...vrrpGroup(),
        devices: [
          ...vrrpGroup().devices,
          {
            device: twin.id,
            interface: "mac:02:00:00:00:0c:02",
            priority: 90,
            trackInterfacesMandatory: [],
            trackInterfacesOptional: [],
          },
        ],
      },
      devices: [edgeA(), edgeC(), twin],
      otherGroups: [],
    });
    expect(problems.map((p) => p.message)).toEqual(["lan0 of edge-c2 has the address 192.168.50.3 of lan0 of edge-c too"]);
  });

  it("names the member in a subnet message", () => {
    const c = { group: vrrpGroup(), devices: [edgeA(), edgeC()], otherGroups: [] };
    c.group.virtualIp = "192.168.51.1";
    expect(validateVrrpGroup(c).map((p) => p.message)).toEqual([
      "virtual IP 192.168.51.1 is outside the subnet 192.168.50.0/24 of lan0 of edge-a",
      "virtual IP 192.168.51.1 is outside the subnet 192.168.50.0/24 of lan0 of edge-c",
    ]);
  });

  it("checks DHCP only on the member's VRRP interface", () => {
    const a = edgeA();
    const other = {
      ...a,
      dhcp: [DhcpServer.parse({ interface: "mac:02:00:00:00:0a:03", rangeStart: "192.168.50.250", rangeEnd: "192.168.50.254" })],
    };
    expect(validateVrrpGroup({ group: vrrpGroup(), devices: [other, edgeC()], otherGroups: [] })).toEqual([]);
  });
});
