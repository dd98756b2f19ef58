import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app loads only bundled files: no CDN, no runtime fetches (the CSP forbids them anyway).
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // Inline nothing: every asset is a file served by the app, so the CSP needs no `data:` scripts.
    assetsInlineLimit: 0,
  },
  server: { port: 1420, strictPort: true, host: "127.0.0.1" },
  // Component tests mount Svelte components in a DOM (happy-dom): they need Svelte's browser build.
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
