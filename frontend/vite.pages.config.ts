import { defineConfig } from "vite";

// The lead's and ML engineer's pages (src/pages): a build of their own, run after vite.config.ts's
// into the same dist/ (emptyOutDir off). Separate builds share no chunks, so the workspace bundle
// stays exactly as it was; the Markdown/KaTeX preview is a lazy chunk loaded only on pages with
// guidelines.
export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: false,
    target: "es2022",
    cssCodeSplit: true,
    assetsInlineLimit: 0,
    rollupOptions: {
      input: { pages: "src/pages/main.ts" },
      output: {
        entryFileNames: "steplabel/[name].js",
        chunkFileNames: "steplabel/pages-chunks/[name]-[hash].js",
        assetFileNames: (info) => {
          const name = info.names?.[0] ?? "";
          if (/\.(woff2?|ttf)$/.test(name)) return "steplabel/fonts/[name][extname]";
          return name === "pages.css" ? "steplabel/[name][extname]" : "steplabel/pages-chunks/[name][extname]";
        },
      },
    },
  },
});
