/**
 * Which commands change the system. The "same config twice → nothing
 * changed" tests assert that a re-apply records none of these; the fake
 * runner, the namespace runner and the fake router all use this one
 * classifier. Anything not recognised as a read counts as a change.
 */
const IP_WRITES = ["add", "del", "delete", "replace", "change", "set", "flush", "append"];

const READS: ((argv: readonly string[]) => boolean)[] = [
  (a) => ["ps", "test", "cat", "ping", "traceroute", "fping"].includes(a[0] ?? ""),
  (a) => a[0] === "conntrack" && (a.includes("-L") || a.includes("-E") || a.includes("-C")),
  // `ip -j …` is always a read; otherwise a show/list/get without a writing verb.
  (a) =>
    a[0] === "ip" &&
    !a.some((w) => IP_WRITES.includes(w)) &&
    (a.includes("-j") || a.some((w) => w === "show" || w === "list" || w === "get")),
  (a) => a[0] === "nft" && (a.includes("list") || a.includes("-c")),
  (a) => a[0] === "tc" && a.some((w) => w === "show" || w === "list"),
  (a) => a[0] === "sysctl" && !a.includes("-w"),
  (a) => a[0] === "swanctl" && a.every((w) => !w.startsWith("--") || /^--(list-|uri|pretty|raw|stats|version)/.test(w)),
  (a) => a[0] === "vtysh" && a.includes("-c") && a.filter((_, i) => a[i - 1] === "-c").every((c) => c.startsWith("show ")),
  (a) => a[0]?.endsWith("frr-reload.py") === true && a.includes("--test") && !a.includes("--reload"),
  (a) => a[0]?.endsWith("kea-dhcp4") === true && a.includes("-t"),
  (a) => a[0] === "systemctl" && a[1] === "is-active",
];

export function isMutating(argv: readonly string[]): boolean {
  return !READS.some((read) => read(argv));
}

/** The space-joined commands among `calls` that change the system. */
export function mutatingCommands(calls: readonly { argv: readonly string[] }[]): string[] {
  return calls.filter((c) => isMutating(c.argv)).map((c) => c.argv.join(" "));
}
