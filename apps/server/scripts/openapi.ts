/** Writes the OpenAPI document to apps/server/openapi.json (`npm run openapi -w @tern/server`); a test fails on drift. */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "../src/http/openapi.ts";

export const OPENAPI_FILE = fileURLToPath(new URL("../openapi.json", import.meta.url));

/** The committed file's exact text: 2-space JSON and a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(OPENAPI_FILE, openApiText());
  console.log(`wrote ${OPENAPI_FILE}`);
}
