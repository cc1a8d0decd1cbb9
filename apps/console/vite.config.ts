/**
 * The console is served by the Tern server at `/` (same origin as the API);
 * in development `vite dev` proxies /api to a running server
 * (TERN_CONSOLE_API, default http://127.0.0.1:3000), SSE included.
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const api = process.env.TERN_CONSOLE_API ?? "http://127.0.0.1:3000";

export default defineConfig({
  plugins: [react()],
  build: {
    // scripts/check-budget.mjs reads it to sum the initial chunks.
    manifest: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: { proxy: { "/api": { target: api, changeOrigin: false } } },
  preview: { proxy: { "/api": { target: api, changeOrigin: false } } },
});
