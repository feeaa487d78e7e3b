// The web app's build (make web: `vite build web`, this file's folder is the root): web/ into server/transport/http/webapp/, the package directory the HTTP
// listener serves at `/` (boneyard.server.transport.http's webapp/, shipped in the wheel). The output is checked
// in; tests/web/test_webapp_is_fresh.py builds into a temporary directory and compares bytes, so
// the build must be deterministic: content-hashed names, no source maps, no build time.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  // Relative asset URLs: the app works at `/` and behind a proxy under any path prefix.
  base: "./",
  resolve: {
    // The API's TypeScript client (clients/typescript): its sources, compiled with the app's
    // (as tsconfig.json's paths), so no npm workspace nor build of the package comes first.
    alias: { "@boneyard/client": fileURLToPath(new URL("../clients/typescript/src/index.ts", import.meta.url)) },
  },
  build: {
    outDir: "../server/transport/http/webapp",
    emptyOutDir: true,
    sourcemap: false,
    // One small app: a single script and a single stylesheet.
    cssCodeSplit: false,
    modulePreload: false,
    reportCompressedSize: false,
    target: "es2022",
  },
  server: {
    // `npx vite web` during development: the API is the server's HTTP listener.
    proxy: { "/boneyard.v1.": "http://127.0.0.1:8080" },
  },
});
