/**
 * Steps of code and agent-trace tasks: numbered, highlighted source lines for code, and for traces
 * a block per event type (a thought or answer as Markdown, a tool call with its arguments as code,
 * an observation collapsed until opened). The workspace imports this module dynamically for
 * non-math tasks only, so it and the highlighter stay out of the math workspace's bundle.
 */
import type { StepType, TaskStep } from "../labeling/state";
import { codeBlock, lineCount, lineRanges } from "../render/code";
import { jsonTokens, layoutJson, memberTokens } from "../render/json_text";
import { renderStep } from "../render/markdown";
import { h, setRendered } from "../shared/dom";
import type { TaskKind } from "./api";

export { codeBlock, lineRanges };

/** How a task's steps are drawn. */
export interface StepDisplay {
  kind: TaskKind;
  /** Code: the language the highlighter uses. */
  language: string;
}

export const STEP_TYPE_NAMES: Record<StepType, string> = {
  thought: "Thought",
  tool_call: "Tool call",
  observation: "Observation",
  answer: "Answer",
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A tool call's name (if any) and its arguments, pretty-printed when JSON. Reads `name(args)`,
 * an OpenAI-style `{"name", "arguments"}` object (arguments an object or a JSON string), or any
 * other JSON object as the arguments.
 */
export function splitToolCall(text: string): { name: string | null; args: string; json: boolean } {
  const m = /^\s*([\w.:-]+)\s*\(([\s\S]*)\)\s*$/.exec(text);
  let name = m ? m[1] : null;
  const raw = m ? m[2] : text;
  let parsed = parseJson(raw);
  // the arguments' JSON tokens, laid out as written (json_text.ts: numbers are not rewritten)
  let tokens = (): string[] => jsonTokens(raw);
  if (!m && parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
    const call = parsed as { name?: unknown; arguments?: unknown };
    if (typeof call.name === "string" && "arguments" in call) {
      name = call.name;
      const args = call.arguments;
      parsed = typeof args === "string" ? (parseJson(args) ?? args) : args;
      if (typeof parsed === "string") return { name, args: parsed, json: false };
      tokens = typeof args === "string" ? () => jsonTokens(args) : () => memberTokens(jsonTokens(raw), "arguments") ?? [];
    }
  }
  if (parsed !== null && typeof parsed === "object") return { name, args: layoutJson(tokens()), json: true };
  return { name, args: raw.trim(), json: false };
}

function traceBody(step: TaskStep): HTMLElement {
  const type = step.type ?? "thought";
  if (type === "tool_call") {
    const call = splitToolCall(step.text);
    return h(
      "div",
      { class: "sl-tool-call" },
      call.name ? h("div", { class: "sl-tool-name" }, h("code", {}, call.name)) : null,
      codeBlock(call.args, call.json ? "json" : "plaintext"),
    );
  }
  if (type === "observation") {
    const lines = lineCount(step.text);
    // Collapsed unless the project rates observations: then the annotator has to read it.
    return h(
      "details",
      { class: "sl-observation", open: step.rated !== false },
      h(
        "summary",
        {},
        `Tool output · ${lines} line${lines === 1 ? "" : "s"} `,
        // the hint follows the state (workspace.css): "click to open" stayed on an open one
        h("span", { class: "sl-when-closed" }, "(click to open)"),
        h("span", { class: "sl-when-open" }, "(click to close)"),
      ),
      h("pre", { class: "sl-observation-text" }, step.text),
    );
  }
  return setRendered(h("div", { class: "sl-md sl-step-text" }), renderStep(step.text));
}

/** The step's body element. `firstLine`: code's line number at the step's first line. */
export function stepBody(step: TaskStep, display: StepDisplay, firstLine: number): HTMLElement {
  if (display.kind === "code") return h("div", { class: "sl-step-text sl-step-code" }, codeBlock(step.text, display.language, firstLine));
  if (display.kind === "trace") return traceBody(step);
  return setRendered(h("div", { class: "sl-md sl-step-text" }), renderStep(step.text));
}

/** The body and type badge of every step of a code or trace task (code lines numbered across
 * steps), and for code how a corrected step or alternative is drawn: highlighted, as written. */
export function stepParts(
  steps: readonly TaskStep[],
  display: StepDisplay,
): { body: HTMLElement; badge: HTMLElement | null; written?: (text: string) => HTMLElement }[] {
  const lines = lineRanges(steps.map((st) => st.text));
  const written =
    display.kind === "code"
      ? (text: string) => h("div", { class: "sl-step-code sl-written-code" }, codeBlock(text, display.language))
      : undefined;
  return steps.map((st, i) => ({ body: stepBody(st, display, lines[i][0]), badge: typeBadge(st), written }));
}

/** The specification's examples of a code task. */
export function testsBlock(tests: string, language: string): HTMLElement {
  return h("div", {}, h("h3", {}, "Tests (the specification's examples)"), codeBlock(tests, language));
}

/** A small badge naming a trace step's type ("Tool call"), or null for math and code. */
export function typeBadge(step: TaskStep): HTMLElement | null {
  if (!step.type) return null;
  return h("span", { class: `sl-step-type sl-type-${step.type}` }, STEP_TYPE_NAMES[step.type]);
}
