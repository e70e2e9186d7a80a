/**
 * Syntax highlighting for code and agent-trace tasks: highlight.js core with a few common
 * languages. Loaded only by dynamic import (code.ts), so the math workspace never downloads it.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";

const LANGUAGES = { bash, c, cpp, go, java, javascript, json, python, rust, sql, typescript };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(["c++"], { languageName: "cpp" });
hljs.registerAliases(["js"], { languageName: "javascript" });
hljs.registerAliases(["ts"], { languageName: "typescript" });
hljs.registerAliases(["py", "python3"], { languageName: "python" });
hljs.registerAliases(["sh", "shell"], { languageName: "bash" });

/** Highlighted HTML for `text` (escaped by highlight.js); null for a language it does not know. */
export function highlight(text: string, language: string): string | null {
  if (!hljs.getLanguage(language)) return null;
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
