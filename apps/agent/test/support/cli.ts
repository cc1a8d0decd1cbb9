/** Runs tern-agent commands in-process with captured output. */
import { type MainDeps, main } from "../../src/main.ts";

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function cli(argv: string[], deps: Partial<MainDeps> = {}): Promise<CliResult> {
  let out = "";
  let err = "";
  const code = await main(argv, {
    env: {},
    io: {
      out: (t) => {
        out += t;
      },
      err: (t) => {
        err += t;
      },
    },
    health: null,
    ...deps,
  });
  return { code, out, err };
}
