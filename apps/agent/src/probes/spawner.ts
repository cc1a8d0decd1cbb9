/**
 * Long-running helper processes (fping) for the probes. The command Runner
 * runs commands to completion; a prober needs a process that keeps printing,
 * so this small seam starts one with the runner's conventions (argv, no
 * shell, LC_ALL=C) and hands its output over line by line.
 */
import { execa } from "execa";

export interface SpawnedProcess {
  stop(): void;
}

export interface Spawner {
  spawn(argv: string[], onLine: (line: string) => void, onExit: (code: number | null) => void): SpawnedProcess;
}

export class ExecSpawner implements Spawner {
  spawn(argv: string[], onLine: (line: string) => void, onExit: (code: number | null) => void): SpawnedProcess {
    const [file, ...args] = argv;
    if (!file) throw new Error("spawn: empty argv");
    const child = execa(file, args, {
      reject: false,
      buffer: false,
      stdin: "ignore",
      env: { LC_ALL: "C" },
      stripFinalNewline: false,
    });
    let rest = "";
    const feed = (chunk: Buffer | string) => {
      rest += String(chunk);
      let nl = rest.indexOf("\n");
      while (nl >= 0) {
        onLine(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        nl = rest.indexOf("\n");
      }
    };
    child.stdout?.on("data", feed);
    child.stderr?.on("data", feed);
    void child.then((r) => onExit(r.exitCode ?? null));
    return { stop: () => child.kill("SIGTERM") };
  }
}
