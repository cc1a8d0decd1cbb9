/** The real process as a CliIo (tests give commands their own). */
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import type { CliIo } from "./io.ts";

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads a line from the terminal with the echo off (passwords). */
function askHidden(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    muted = true;
  });
}

export function processIo(): CliIo {
  return {
    env: process.env,
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    readStdin: async () => (process.stdin.isTTY ? undefined : readAll(process.stdin)),
    promptSecret: async (question) => (process.stdin.isTTY && process.stderr.isTTY ? askHidden(question) : null),
    stdoutIsTTY: process.stdout.isTTY === true,
    cwd: process.env.INIT_CWD ?? process.cwd(),
  };
}
