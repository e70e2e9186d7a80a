/**
 * Every key of the workspace, in one table: the key handler dispatches through it, and the
 * shortcuts dialog, the side panel's key hints and the rating buttons' badges are drawn from it.
 */
import type { Mode, Rating } from "../labeling/state";

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
  | "shortcuts"
  // compare tasks (two solutions side by side)
  | "prefer-a"
  | "prefer-b"
  | "prefer-tie"
  | "strength-1"
  | "strength-2"
  | "strength-3"
  | "mark-wrong-a"
  | "mark-wrong-b";

/** Which task a binding belongs to: step labels (the default) or comparing two solutions. */
export type KeyScope = "steps" | "compare";

export interface KeyBinding {
  /** `KeyboardEvent.key` values that trigger it (none: handled by a text box or the browser). */
  keys: readonly string[];
  /** How the key is written for people. */
  label: string;
  /** What it does (the shortcuts dialog). */
  help: string;
  /** A short name for the side panel's key hints; bindings without one are only in the dialog. */
  hint?: string;
  /** The labeling modes it works in (the dialog and the hints list it only there); default: all. */
  modes?: readonly Mode[];
  /** Hints and help of its own in a mode: a key phase 1 leans on is listed there, named as it works there. */
  inMode?: Partial<Record<Mode, { hint?: string; help?: string }>>;
  action?: KeyAction;
  /** The task kind it works in; bindings without one work in both. */
  scope?: KeyScope;
  /** Held down, it acts again on each auto-repeat. Only moves do: a held rating, undo or submit
   * would rate, undo or submit step after step before the annotator lets go. */
  repeats?: boolean;
}

export const KEYMAP: readonly KeyBinding[] = [
  { keys: ["1"], label: "1", action: "rate-negative", scope: "steps", help: "Rate Negative (the step or alternative in focus)", hint: "Negative" },
  { keys: ["2"], label: "2", action: "rate-neutral", scope: "steps", help: "Rate Neutral", hint: "Neutral" },
  { keys: ["3"], label: "3", action: "rate-positive", scope: "steps", help: "Rate Positive", hint: "Positive" },
  {
    keys: ["f", "F"],
    label: "f",
    action: "flag", scope: "steps",
    help: "Flag / unflag your last rating as unsure (its Flag button shows the f); any Flag button can be clicked",
    hint: "Flag last rating",
  },
  { keys: ["Backspace"], label: "Backspace", action: "undo", help: "Undo the last change", hint: "Undo" },
  { keys: ["ArrowDown", "j"], label: "↓ / j", action: "focus-next", scope: "steps", repeats: true, help: "Move to the next alternative at this step" },
  { keys: ["ArrowUp", "k"], label: "↑ / k", action: "focus-prev", scope: "steps", repeats: true, help: "Move back towards the step" },
  {
    keys: ["a"],
    label: "a",
    action: "write-alternative", scope: "steps",
    help: "Write an alternative step here (after a Negative; any rated step in phase 1)",
    inMode: { phase1: { hint: "Alternative", help: "Write another alternative step here (once the step is rated)" } },
  },
  {
    keys: ["c"],
    label: "c",
    action: "write-human",
    scope: "steps",
    help: "Write the corrected step (phase 1: your own step)",
    inMode: { phase1: { hint: "Your own step", help: "Write your own step where nothing is Positive" } },
  },
  {
    keys: ["e"],
    label: "e",
    action: "write-critique", scope: "steps",
    help: "Explain: write a critique of the step you rated last (saved with your draft; Enter saves it)",
    hint: "Critique",
  },
  { keys: [], label: "Enter", help: "In a text box: save it (Shift+Enter: new line); Esc leaves it" },
  {
    keys: ["n"],
    label: "n",
    action: "next-step",
    scope: "steps",
    modes: ["phase1"],
    help: "Move on to the next step once something here is Positive",
    hint: "Next step",
  },
  { keys: ["Enter"], label: "Enter", action: "submit", help: "Submit when the labeling is complete", hint: "Submit" },
  { keys: ["g"], label: "g", action: "give-up", scope: "steps", help: "Give up (asks for a reason)" },
  { keys: ["b"], label: "b", action: "bad-problem", scope: "steps", help: "Bad problem (asks for a reason)" },
  { keys: [], label: "Tab", help: "Reaches every button, Skip included (what you skip is not served to you again)" },
  { keys: ["?"], label: "?", action: "shortcuts", help: "Show / hide this list", hint: "All keys" },
  // Compare tasks: which of the two solutions is better, by how much, and where each first goes wrong.
  { keys: ["ArrowLeft", "a"], label: "← / a", action: "prefer-a", scope: "compare", help: "A (left) is better", hint: "A better" },
  { keys: ["ArrowRight", "b"], label: "→ / b", action: "prefer-b", scope: "compare", help: "B (right) is better", hint: "B better" },
  { keys: ["t", "="], label: "t", action: "prefer-tie", scope: "compare", help: "Tie: equally good (or bad)", hint: "Tie" },
  { keys: ["1"], label: "1", action: "strength-1", scope: "compare", help: "Slightly better", hint: "Slightly" },
  { keys: ["2"], label: "2", action: "strength-2", scope: "compare", help: "Clearly better", hint: "Clearly" },
  { keys: ["3"], label: "3", action: "strength-3", scope: "compare", help: "Much better", hint: "Much" },
  {
    keys: ["q"],
    label: "q",
    action: "mark-wrong-a",
    scope: "compare",
    repeats: true,
    help: "Move A's \"first wrong step\" marker down one step (past the last: no marker)",
    hint: "A: first wrong step",
  },
  {
    keys: ["p"],
    label: "p",
    action: "mark-wrong-b",
    scope: "compare",
    repeats: true,
    help: "Move B's \"first wrong step\" marker down one step (past the last: no marker)",
    hint: "B: first wrong step",
  },
];

/** The bindings that work in a task of this kind. */
export function bindingsFor(scope: KeyScope): KeyBinding[] {
  return KEYMAP.filter((b) => !b.scope || b.scope === scope);
}

/** The bindings as listed for a project in `mode`: keys of the other mode left out, hints and help
 * as they read there (phase 1's panel listed neither n, c nor a, the keys it turns on). */
export function listedFor(scope: KeyScope, mode: Mode): KeyBinding[] {
  return bindingsFor(scope)
    .filter((b) => !b.modes || b.modes.includes(mode))
    .map((b) => ({ ...b, ...b.inMode?.[mode] }));
}

function keyIndex(scope: KeyScope): Map<string, KeyAction> {
  return new Map<string, KeyAction>(
    bindingsFor(scope).flatMap((b) => (b.action ? b.keys.map((k): [string, KeyAction] => [k, b.action!]) : [])),
  );
}
const BY_KEY: Record<KeyScope, Map<string, KeyAction>> = { steps: keyIndex("steps"), compare: keyIndex("compare") };

/** The action of a key press in a task of kind `scope`; null for unbound keys and any press with Ctrl, Meta or Alt. */
export function actionFor(
  e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey">,
  scope: KeyScope = "steps",
): KeyAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  return BY_KEY[scope].get(e.key) ?? null;
}

const REPEATING = new Set(KEYMAP.flatMap((b) => (b.repeats && b.action ? [b.action] : [])));

/** Whether this press is a held key's auto-repeat of an action that acts once per press. */
export function ignoredRepeat(e: Pick<KeyboardEvent, "repeat">, action: KeyAction): boolean {
  return e.repeat === true && !REPEATING.has(action);
}

/**
 * Whether the focused element takes this key press itself, so no shortcut may act on it: typing
 * in a text field, and Enter on a link or a button, which follows or presses it (a keyboard user
 * leaving by the header's links must not submit a label). `ownSubmit`, the page's Submit button,
 * is the exception: Enter there submits either way.
 */
export function focusTakesKey(target: EventTarget | null, key: string, ownSubmit: unknown = null): boolean {
  const t = target as Partial<HTMLElement> | null;
  if (!t || typeof t.tagName !== "string") return false;
  const tag = t.tagName;
  if (tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || t.isContentEditable) return true;
  return key === "Enter" && t !== ownSubmit && (tag === "A" || tag === "BUTTON" || tag === "SUMMARY");
}

/**
 * Whether focus lets a key press reach the workspace's shortcuts: focus inside the workspace (its
 * dialogs included), or on no element of its own for keys but Enter: the page body (a disabled
 * button lost it) or an element around the workspace, the page's <main> that a click on the
 * problem's text or the side panel focuses (tabindex=-1, the skip link's target; every key then
 * did nothing, silently). A focused site header link keeps every key: 3 there rated a step,
 * Backspace undid, and Enter on the body submitted (WCAG 2.1.4).
 */
export function focusInWorkspace(target: EventTarget | null, root: { contains(n: Node | null): boolean }, key: string): boolean {
  const t = target as Partial<HTMLElement> | null;
  const around = typeof t?.contains === "function" && t.contains(root as unknown as Node);
  if (!t || typeof t.tagName !== "string" || t.tagName === "BODY" || t.tagName === "HTML" || around) {
    return key !== "Enter";
  }
  return root.contains(t as Node);
}

const SINGLE_KEYS = "steplabel:single-keys";

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage blocked: the shortcuts stay on
  }
}

/** Whether the single-key shortcuts are on (the default; the Keys panel's switch turns them off). */
export function singleKeysOn(store: Pick<Storage, "getItem"> | null = storage()): boolean {
  try {
    return store?.getItem(SINGLE_KEYS) !== "off";
  } catch {
    return true;
  }
}

/** A phone or tablet held in the hand: a coarse pointer on a narrow screen, where workspace.css
 * hides the key list. Keys still act there (a keyboard may be attached), but no text or button
 * names one: "press Enter to submit" or "Critique (e)" points at keys its screen does not have. */
export const TOUCH_SCREEN = "(pointer: coarse) and (max-width: 900px)";

type Media = ((query: string) => { matches: boolean }) | null;

/** Whether this is a touch screen now (TOUCH_SCREEN). */
export function onTouchScreen(media: Media = browserMedia()): boolean {
  return media?.(TOUCH_SCREEN).matches ?? false;
}

/** Whether the texts and buttons name keys: the shortcuts are on, and this is no touch screen. */
export function keysNamed(on: boolean, media: Media = browserMedia()): boolean {
  return on && !onTouchScreen(media);
}

/**
 * Whether a key press in a text box (a critique, a written step, a reason) saves it: Enter without
 * Shift, not while an input method composes. Not on a touch screen: there the return key is the
 * only way to start a new line (no Shift+Enter), and the box's button saves.
 */
export function savesTextBox(e: Pick<KeyboardEvent, "key" | "shiftKey" | "isComposing">, media: Media = browserMedia()): boolean {
  return e.key === "Enter" && !e.shiftKey && !e.isComposing && !onTouchScreen(media);
}

function browserMedia(): ((query: string) => MediaQueryList) | null {
  return typeof window !== "undefined" && typeof window.matchMedia === "function" ? (q) => window.matchMedia(q) : null;
}

/** Call `redraw` when the screen starts or stops being a touch screen (a tablet turned, a window resized). */
export function onTouchScreenChange(redraw: () => void): void {
  browserMedia()?.(TOUCH_SCREEN).addEventListener("change", redraw);
}

/** Remember the switch in this browser. */
export function setSingleKeys(on: boolean, store: Pick<Storage, "setItem" | "removeItem"> | null = storage()): void {
  try {
    if (on) store?.removeItem(SINGLE_KEYS);
    else store?.setItem(SINGLE_KEYS, "off");
  } catch {
    // not remembered: it holds for this page
  }
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
