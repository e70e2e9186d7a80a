/**
 * Every key of the workspace, in one table: the key handler dispatches through it, and the
 * shortcuts dialog, the side panel's key hints and the rating buttons' badges are drawn from it.
 */
import type { Rating } from "../labeling/state";

export type KeyAction =
  | "rate-negative"
  | "rate-neutral"
  | "rate-positive"
  | "flag"
  | "undo"
  | "focus-next"
  | "focus-prev"
  | "write-alternative"
  | "write-human"
  | "write-critique"
  | "next-step"
  | "submit"
  | "give-up"
  | "bad-problem"
  | "shortcuts";

export interface KeyBinding {
  /** `KeyboardEvent.key` values that trigger it (none: handled by a text box or the browser). */
  keys: readonly string[];
  /** How the key is written for people. */
  label: string;
  /** What it does (the shortcuts dialog). */
  help: string;
  /** A short name for the side panel's key hints; bindings without one are only in the dialog. */
  hint?: string;
  action?: KeyAction;
}

export const KEYMAP: readonly KeyBinding[] = [
  { keys: ["1"], label: "1", action: "rate-negative", help: "Rate Negative (the step or alternative in focus)", hint: "Negative" },
  { keys: ["2"], label: "2", action: "rate-neutral", help: "Rate Neutral", hint: "Neutral" },
  { keys: ["3"], label: "3", action: "rate-positive", help: "Rate Positive", hint: "Positive" },
  {
    keys: ["f", "F"],
    label: "f",
    action: "flag",
    help: "Flag / unflag your last rating as unsure (its Flag button shows the f); any Flag button can be clicked",
    hint: "Flag last rating",
  },
  { keys: ["Backspace"], label: "Backspace", action: "undo", help: "Undo the last change", hint: "Undo" },
  { keys: ["ArrowDown", "j"], label: "↓ / j", action: "focus-next", help: "Move to the next alternative at this step" },
  { keys: ["ArrowUp", "k"], label: "↑ / k", action: "focus-prev", help: "Move back towards the step" },
  {
    keys: ["a"],
    label: "a",
    action: "write-alternative",
    help: "Write an alternative step here (after a Negative; any rated step in phase 1)",
  },
  { keys: ["c"], label: "c", action: "write-human", help: "Write the corrected step (phase 1: your own step)" },
  {
    keys: ["e"],
    label: "e",
    action: "write-critique",
    help: "Explain: write a critique of the step you rated last (saved with your draft; Enter saves it)",
    hint: "Critique",
  },
  { keys: [], label: "Enter", help: "In a text box: save it (Shift+Enter: new line); Esc leaves it" },
  { keys: ["n"], label: "n", action: "next-step", help: "Phase 1: move on to the next step once something here is Positive" },
  { keys: ["Enter"], label: "Enter", action: "submit", help: "Submit when the labeling is complete", hint: "Submit" },
  { keys: ["g"], label: "g", action: "give-up", help: "Give up (asks for a reason)" },
  { keys: ["b"], label: "b", action: "bad-problem", help: "Bad problem (asks for a reason)" },
  { keys: [], label: "Tab", help: "Reaches every button, Skip included (skipped solutions are not served to you again)" },
  { keys: ["?"], label: "?", action: "shortcuts", help: "Show / hide this list", hint: "All keys" },
];

const BY_KEY = new Map<string, KeyAction>(
  KEYMAP.flatMap((b) => (b.action ? b.keys.map((k): [string, KeyAction] => [k, b.action!]) : [])),
);

/** The action of a key press; null for unbound keys and any press with Ctrl, Meta or Alt. */
export function actionFor(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey">): KeyAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  return BY_KEY.get(e.key) ?? null;
}

/** The label of the key bound to an action (for badges and `aria-keyshortcuts`). */
export function keyFor(action: KeyAction): string {
  const b = KEYMAP.find((x) => x.action === action);
  if (!b) throw new Error(`no key for ${action}`);
  return b.label;
}

export const RATE_ACTIONS: Record<Rating, KeyAction> = { [-1]: "rate-negative", 0: "rate-neutral", 1: "rate-positive" };

/** The rating a rate-* action gives. */
export function ratingOf(action: KeyAction): Rating | null {
  for (const r of [-1, 0, 1] as Rating[]) if (RATE_ACTIONS[r] === action) return r;
  return null;
}
