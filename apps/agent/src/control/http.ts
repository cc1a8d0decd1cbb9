/** One JSON POST over http or https with the agent's TLS trust (global fetch cannot take a CA). */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface JsonAnswer {
  status: number;
  body: unknown;
}

export function postJson(url: string, body: unknown, ca: string[] | undefined, timeoutMs = 30_000): Promise<JsonAnswer> {
  const u = new URL(url);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = (u.protocol === "https:" ? httpsRequest : httpRequest)(
      u,
      {
        method: "POST",
        timeout: timeoutMs,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) },
        ...(ca ? { ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          let json: unknown = null;
          try {
            json = JSON.parse(raw);
          } catch {}
          resolve({ status: res.statusCode ?? 0, body: json });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end(text);
  });
}
