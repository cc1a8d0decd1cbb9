/**
 * A tiny model of nftables for the fake runner: tables created by `nft -f`
 * scripts (the create/delete/define form the drivers render) and removed by
 * `nft delete table`. The listing is the table block of the last script, so
 * a hand edit can be simulated with `tamper()`.
 */
import { readFile } from "node:fs/promises";
import type { FakeRunner } from "./fake-runner.ts";

export class FakeNft {
  readonly tables = new Map<string, string>();

  constructor(runner: FakeRunner) {
    runner.on(["nft", "list", "table"], (argv) => {
      const listing = this.tables.get(`${argv[3]} ${argv[4]}`);
      return listing === undefined ? { exitCode: 1, stderr: "Error: No such file or directory" } : { stdout: listing };
    });
    runner.on(["nft", "delete", "table"], (argv) => {
      const key = `${argv[3]} ${argv[4]}`;
      if (!this.tables.delete(key)) return { exitCode: 1, stderr: "Error: No such file or directory" };
      return {};
    });
    runner.on(["nft", "-a", "list", "table"], (argv) => {
      const listing = this.tables.get(`${argv[4]} ${argv[5]}`);
      return listing === undefined ? { exitCode: 1, stderr: "Error: No such file or directory" } : { stdout: listing };
    });
    runner.on(["nft", "list", "ruleset"], () => ({
      stdout: [...this.tables].map(([key, body]) => `table ${key} {\n${body}}\n`).join(""),
    }));
    runner.on(["nft", "-f"], async (argv) => {
      const script = await readFile(argv[2]!, "utf8");
      for (const m of script.matchAll(/^table (\w+) (\w+) \{\n([\s\S]*?)^\}$/gm)) this.tables.set(`${m[1]} ${m[2]}`, m[3]!);
      return {};
    });
  }

  /** Simulates a hand edit of a table. */
  tamper(key: string): void {
    this.tables.set(key, `${this.tables.get(key) ?? ""}    # edited by hand\n`);
  }
}
