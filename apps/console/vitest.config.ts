/** Unit tests beside the code (src/**\/*.test.ts[x]) in happy-dom; the browser tests are e2e/ (Playwright). */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [react()],
  test: {
    include: ["src/**/*.test.{ts,tsx}"],
    environment: "happy-dom",
  },
});
