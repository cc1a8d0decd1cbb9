/**
 * Which recorded commands change the system. The re-apply tests assert that
 * applying the same config twice records none of these the second time.
 * Anything not recognised as a read is counted as a change.
 */
const READS: ((argv: string[]) => boolean)[] = [
  (a) => a[0] === "ps" || a[0] === "test" || a[0] === "cat",
  (a) =>
    a[0] === "ip" &&
    a.some((w) => w === "show" || w === "list") &&
    !a.some((w) => ["add", "del", "replace", "set", "flush"].includes(w)),
  (a) => a[0] === "swanctl" && a.every((w) => !w.startsWith("--") || /^--(list-|uri|pretty|raw|stats|version)/.test(w)),
  (a) => a[0] === "vtysh" && a.filter((_, i) => a[i - 1] === "-c").every((c) => c.startsWith("show ")) && a.includes("-c"),
  (a) => a[0]?.endsWith("frr-reload.py") === true && a.includes("--test") && !a.includes("--reload"),
  (a) => a[0]?.endsWith("kea-dhcp4") === true && a.includes("-t"),
  (a) => a[0] === "systemctl" && a[1] === "is-active",
];

export function isMutating(argv: string[]): boolean {
  return !READS.some((read) => read(argv));
}

/** The space-joined commands among `calls` that change the system. */
export function mutatingCommands(calls: { argv: string[] }[]): string[] {
  return calls.filter((c) => isMutating(c.argv)).map((c) => c.argv.join(" "));
}
