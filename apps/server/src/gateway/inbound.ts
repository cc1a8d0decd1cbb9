/** Turns a raw websocket frame into a validated DeviceMessage, or says what is wrong with it. */
import { DeviceMessage } from "@tern/protocol";
import { findJsonProblem } from "../http/input/json-body.ts";

export type Inbound =
  | { ok: true; message: DeviceMessage }
  | { ok: false; kind: "not-json" | "invalid"; code: "BAD_MESSAGE" | "VALIDATION_FAILED"; message: string };

const MAX_ISSUES = 5;

export function parseInbound(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): Inbound {
  if (isBinary)
    return { ok: false, kind: "not-json", code: "BAD_MESSAGE", message: "binary frames are not accepted: send JSON text" };
  const text = Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, kind: "not-json", code: "BAD_MESSAGE", message: `message is not JSON: ${(err as Error).message}` };
  }
  // Before the schema: a NUL would make the database refuse a whole status batch of many devices, and a
  // hostile nesting depth costs the schema walk. Unknown fields stay accepted (a newer agent's additions).
  const problem = findJsonProblem(json);
  if (problem)
    return {
      ok: false,
      kind: "invalid",
      code: "VALIDATION_FAILED",
      message: `invalid message: ${problem.path || "(message)"}: ${problem.message}`,
    };
  const parsed = DeviceMessage.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, MAX_ISSUES)
      .map((i) => `${i.path.join(".") || "(message)"}: ${i.message}`)
      .join("; ");
    const type =
      typeof (json as { type?: unknown })?.type === "string" ? ` (type "${(json as { type: string }).type.slice(0, 40)}")` : "";
    return { ok: false, kind: "invalid", code: "VALIDATION_FAILED", message: `invalid message${type}: ${issues}` };
  }
  return { ok: true, message: parsed.data };
}
