/**
 * JSON text laid out as JSON.stringify(value, null, 2) lays it out, every string and number kept
 * as written. Parsing and stringifying rewrote a tool call's numbers (an id past 2^53 one off,
 * 2.50 as 2.5, 1e3 as 1000) in the text an annotator judges. The text must be valid JSON (the
 * caller parsed it first).
 */

/** The tokens of JSON text: strings and literals as written, and each of `{}[]:,`. */
export function jsonTokens(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      tokens.push(text.slice(i, j + 1));
      i = j + 1;
    } else if ("{}[]:,".includes(c)) {
      tokens.push(c);
      i += 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s{}[\]:,"]/.test(text[j])) j += 1;
      tokens.push(text.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

/** Tokens laid out two spaces an indent, `{}` and `[]` kept on one line, as JSON.stringify does. */
export function layoutJson(tokens: readonly string[]): string {
  let out = "";
  let depth = 0;
  const newline = (): string => "\n" + "  ".repeat(depth);
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t === "{" || t === "[") {
      const close = t === "{" ? "}" : "]";
      if (tokens[k + 1] === close) {
        out += t + close;
        k += 1;
        continue;
      }
      depth += 1;
      out += t + newline();
    } else if (t === "}" || t === "]") {
      depth -= 1;
      out += newline() + t;
    } else if (t === ",") out += "," + newline();
    else if (t === ":") out += ": ";
    else out += t;
  }
  return out;
}

/** The tokens of the value of the object's top-level `key` (the last, as JSON.parse keeps), or null. */
export function memberTokens(tokens: readonly string[], key: string): string[] | null {
  let found: string[] | null = null;
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (depth === 1 && tokens[k + 1] === ":" && t.startsWith('"') && JSON.parse(t) === key) {
      let end = k + 2;
      for (let open = 0; end < tokens.length; end++) {
        const v = tokens[end];
        if (v === "{" || v === "[") open += 1;
        else if (v === "}" || v === "]") open -= 1;
        if (open === 0) break;
      }
      found = tokens.slice(k + 2, end + 1);
    }
    if (t === "{" || t === "[") depth += 1;
    else if (t === "}" || t === "]") depth -= 1;
  }
  return found;
}
