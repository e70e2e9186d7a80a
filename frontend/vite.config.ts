import { defineConfig } from "vitest/config";

// Django serves frontend/dist through staticfiles: fixed names under steplabel/ let templates use
// {% static "steplabel/workspace.js" %}; production hashes them (ManifestStaticFilesStorage).
// More pages (the dashboard) add an entry to `input`.
export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    cssCodeSplit: true,
    assetsInlineLimit: 0,
    // No preload helper in the entries: the one lazy chunk (code and trace views) has no CSS of its own.
    modulePreload: false,
    rollupOptions: {
      input: { workspace: "src/workspace/main.ts", dashboard: "src/dashboard/main.ts" },
      output: {
        entryFileNames: "steplabel/[name].js",
        chunkFileNames: "steplabel/chunks/[name]-[hash].js",
        assetFileNames: (info) =>
          /\.(woff2?|ttf)$/.test(info.names?.[0] ?? "") ? "steplabel/fonts/[name][extname]" : "steplabel/[name][extname]",
      },
    },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
