/** The pure interface merges: discovery at (re-)registration and the admin's PUT entries. */
import { DeviceInterface, type RegisterInterface } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { applyInterfaceUpdates, discoveredInterface, mergeDiscovered } from "../../src/services/devices/interfaces.ts";

const reported = (devId: string, extra: Partial<RegisterInterface> = {}): RegisterInterface => ({
  devId,
  name: `if${devId.replace(/\W/g, "").slice(0, 10)}`,
  mac: "",
  deviceType: "ethernet",
  IPv4: "",
  IPv4Mask: null,
  gateway: "",
  dhcp: false,
  ...extra,
});

let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;

describe("discovered interfaces", () => {
  it("are unassigned; the one with a default gateway is suggested as WAN", () => {
    const wan = discoveredInterface(reported("a", { IPv4: "203.0.113.2", IPv4Mask: 24, gateway: "203.0.113.1" }), newId());
    const other = discoveredInterface(reported("b"), newId());
    expect(DeviceInterface.parse(wan)).toEqual(wan);
    expect([wan.type, wan.isAssigned, wan.gateway]).toEqual(["WAN", false, "203.0.113.1"]);
    expect([other.type, other.isAssigned]).toEqual(["NONE", false]);
  });

  it("re-registration keeps assigned interfaces (even when no longer reported), refreshes unassigned ones, drops vanished unassigned ones", () => {
    const stored = [
      {
        ...discoveredInterface(reported("kept"), newId()),
        isAssigned: true,
        type: "LAN" as const,
        IPv4: "10.0.0.1",
        IPv4Mask: 24,
      },
      { ...discoveredInterface(reported("fresh"), newId()), bandwidthMbps: { tx: 5, rx: 50 } },
      { ...discoveredInterface(reported("gone-assigned"), newId()), isAssigned: true, type: "WAN" as const, dhcp: true },
      discoveredInterface(reported("gone-unassigned"), newId()),
    ];
    const merged = mergeDiscovered(
      stored,
      [
        reported("kept", { IPv4: "192.0.2.9", IPv4Mask: 24 }),
        reported("fresh", { IPv4: "198.51.100.4", IPv4Mask: 25 }),
        reported("new"),
      ],
      newId,
    );
    expect(merged.map((i) => i.devId)).toEqual(["kept", "fresh", "new", "gone-assigned"]);
    expect(merged[0]).toEqual(stored[0]);
    expect(merged[1]).toMatchObject({ id: stored[1]!.id, IPv4: "198.51.100.4", IPv4Mask: 25, bandwidthMbps: { tx: 5, rx: 50 } });
    expect(merged[2]!.id).not.toBe(stored[3]!.id);
    expect(merged[3]).toEqual(stored[2]);
  });
});

describe("admin interface updates", () => {
  const stored = [discoveredInterface(reported("x", { IPv4: "10.1.0.1", IPv4Mask: 24 }), newId())];

  it("apply only the keys present; read-only fields are ignored", () => {
    const update = { ...DeviceInterface.omit({ id: true }).parse({ devId: "x", name: "lan9" }), PublicIP: "1.1.1.1" };
    const { interfaces, problems } = applyInterfaceUpdates(stored, [update], [["devId", "name", "PublicIP"]]);
    expect(problems).toEqual([]);
    expect(interfaces[0]).toEqual({ ...stored[0], name: "lan9" });
    // Without the present keys every field counts (defaults included).
    const whole = applyInterfaceUpdates(stored, [update]);
    expect(whole.interfaces[0]).toMatchObject({ name: "lan9", IPv4: "", PublicIP: "" });
  });
});
