/** A tiny model of root qdiscs for the fake runner: `tc qdisc replace … root … htb`, `tc qdisc del … root`, `tc -j qdisc show`; classes are accepted. */
import type { FakeRunner } from "./fake-runner.ts";

export class FakeTc {
  readonly roots = new Map<string, { kind: string; handle: string }>();

  constructor(runner: FakeRunner) {
    runner.on(["tc", "-j", "qdisc", "show", "dev"], (argv) => {
      const root = this.roots.get(argv[5]!);
      return { stdout: JSON.stringify(root ? [{ ...root, root: true }] : [{ kind: "noqueue", handle: "0:", root: true }]) };
    });
    runner.on(["tc", "qdisc", "replace", "dev"], (argv) => {
      if (argv[5] !== "root") return {};
      const was = this.roots.get(argv[4]!);
      // As the kernel: an HTB root cannot be changed in place, only replaced by another kind or handle.
      if (was?.kind === "htb" && argv[8] === "htb" && was.handle === argv[7])
        return { exitCode: 2, stderr: "Error: Change operation not supported by specified qdisc." };
      this.roots.set(argv[4]!, { kind: argv[8]!, handle: argv[7]! });
      return {};
    });
    runner.on(["tc", "class", "replace"], () => ({}));
    runner.on(["tc", "-s"], () => ({ stdout: "(fake tc statistics)\n" }));
    runner.on(["tc", "qdisc", "del", "dev"], (argv) => {
      if (!this.roots.delete(argv[4]!)) return { exitCode: 2, stderr: "Error: Cannot delete qdisc with handle of zero." };
      return {};
    });
  }
}
