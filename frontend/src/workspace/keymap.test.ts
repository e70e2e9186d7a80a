import { describe, expect, it } from "vitest";

import {
  actionFor,
  bindingsFor,
  focusInWorkspace,
  focusTakesKey,
  ignoredRepeat,
  KEYMAP,
  keyFor,
  keysNamed,
  savesTextBox,
  listedFor,
  ratingOf,
  TOUCH_SCREEN,
  setSingleKeys,
  singleKeysOn,
} from "./keymap";
import { MemoryStorage } from "./memory_storage.testing";

const press = (key: string, mods: Partial<KeyboardEvent> = {}) =>
  actionFor({ key, ctrlKey: false, metaKey: false, altKey: false, ...mods });

describe("KEYMAP", () => {
  it("binds each action to exactly one row and each key to at most one action", () => {
    const actions = KEYMAP.flatMap((b) => (b.action ? [b.action] : []));
    expect(new Set(actions).size).toBe(actions.length);
    for (const scope of ["steps", "compare"] as const) {
      const keys = bindingsFor(scope).flatMap((b) => (b.action ? b.keys : []));
      expect(new Set(keys).size).toBe(keys.length);
    }
    expect(KEYMAP.every((b) => b.help.length > 0 && b.label.length > 0)).toBe(true);
  });

  it("maps presses to actions, and ignores modified and unbound ones", () => {
    expect(press("1")).toBe("rate-negative");
    expect(press("F")).toBe("flag");
    expect(press("j")).toBe("focus-next");
    expect(press("ArrowUp")).toBe("focus-prev");
    expect(press("Enter")).toBe("submit");
    expect(press("?")).toBe("shortcuts");
    expect(press("1", { ctrlKey: true })).toBeNull();
    expect(press("r", { metaKey: true })).toBeNull();
    expect(press("x")).toBeNull();
    expect(press("ArrowLeft")).toBeNull(); // a compare key does nothing in a step task
    const inCompare = (key: string) => actionFor({ key, ctrlKey: false, metaKey: false, altKey: false }, "compare");
    expect([inCompare("a"), inCompare("ArrowRight"), inCompare("t"), inCompare("3"), inCompare("p")]).toEqual([
      "prefer-a",
      "prefer-b",
      "prefer-tie",
      "strength-3",
      "mark-wrong-b",
    ]);
    expect([inCompare("Enter"), inCompare("Backspace"), inCompare("f")]).toEqual(["submit", "undo", null]);
  });

  it("acts once per press for a held rating, undo or submit key; moves repeat", () => {
    const held = { repeat: true };
    for (const action of ["rate-negative", "rate-positive", "undo", "submit", "flag", "prefer-a", "strength-2"] as const) {
      expect(ignoredRepeat(held, action)).toBe(true);
      expect(ignoredRepeat({ repeat: false }, action)).toBe(false);
    }
    for (const action of ["focus-next", "focus-prev", "mark-wrong-a", "mark-wrong-b"] as const) {
      expect(ignoredRepeat(held, action)).toBe(false);
    }
  });

  it("gives the rating buttons their keys and ratings", () => {
    expect([keyFor("rate-negative"), keyFor("rate-neutral"), keyFor("rate-positive"), keyFor("flag")]).toEqual([
      "1",
      "2",
      "3",
      "f",
    ]);
    expect([ratingOf("rate-negative"), ratingOf("rate-positive"), ratingOf("undo")]).toEqual([-1, 1, null]);
  });

  it("leaves Enter to a focused link or button (but the page's own Submit) and every key to text fields", () => {
    const el = (tagName: string, extra: object = {}) =>
      ({ tagName, isContentEditable: false, ...extra }) as unknown as EventTarget;
    const submit = el("BUTTON");
    expect(focusTakesKey(el("A"), "Enter", submit)).toBe(true); // the header's Projects link: follow it
    expect(focusTakesKey(el("BUTTON"), "Enter", submit)).toBe(true); // Skip: press it
    expect(focusTakesKey(submit, "Enter", submit)).toBe(false); // Submit: Enter submits anyway
    expect(focusTakesKey(el("A"), "3", submit)).toBe(false); // a link in the workspace: focusInWorkspace decides
    expect(focusTakesKey(el("TEXTAREA"), "3")).toBe(true);
    expect(focusTakesKey(el("DIV", { isContentEditable: true }), "Enter")).toBe(true);
    expect(focusTakesKey(el("BODY"), "Enter")).toBe(false);
    expect(focusTakesKey(null, "Enter")).toBe(false);
  });
});

describe("focusInWorkspace", () => {
  const inside = { tagName: "BUTTON" } as unknown as EventTarget;
  const headerLink = { tagName: "A" } as unknown as EventTarget;
  const root = { contains: (n: Node | null) => n === (inside as unknown) };

  it("lets keys act from inside the workspace only, and not Enter from the page body", () => {
    for (const key of ["3", "Backspace", "Enter", "?"]) {
      expect(focusInWorkspace(inside, root, key)).toBe(true);
      expect(focusInWorkspace(headerLink, root, key)).toBe(false); // the site header's links
    }
    const body = { tagName: "BODY" } as unknown as EventTarget;
    expect(focusInWorkspace(body, root, "3")).toBe(true); // focus lost after a click on text
    expect(focusInWorkspace(body, root, "Enter")).toBe(false);
    expect(focusInWorkspace(body, root, "Backspace")).toBe(true); // after a refused submit: undo
    expect(focusInWorkspace(null, root, "Enter")).toBe(false);
  });
  it("lets keys but Enter act with focus on an element around the workspace (<main>, after a click on text)", () => {
    const main = { tagName: "MAIN", contains: (n: unknown) => n === root } as unknown as EventTarget;
    for (const key of ["3", "Backspace", "a", "?"]) expect(focusInWorkspace(main, root, key)).toBe(true);
    expect(focusInWorkspace(main, root, "Enter")).toBe(false);
    const footer = { tagName: "FOOTER", contains: () => false } as unknown as EventTarget;
    expect(focusInWorkspace(footer, root, "3")).toBe(false); // beside the workspace, not around it
  });
});

describe("singleKeysOn", () => {
  it("is on until turned off, and remembers the switch", () => {
    const store = new MemoryStorage();
    expect(singleKeysOn(store)).toBe(true);
    setSingleKeys(false, store);
    expect(singleKeysOn(store)).toBe(false);
    setSingleKeys(true, store);
    expect(singleKeysOn(store)).toBe(true);
    expect(singleKeysOn(null)).toBe(true); // no storage: on
  });
});

describe("listedFor", () => {
  const hints = (mode: "phase1" | "phase2") =>
    listedFor("steps", mode).flatMap((b) => (b.hint ? [`${b.label} ${b.hint}`] : []));

  it("lists the keys phase 1 turns on, and n only there", () => {
    expect(hints("phase1")).toEqual(expect.arrayContaining(["a Alternative", "c Your own step", "n Next step"]));
    expect(hints("phase2").some((h) => /^[acn] /.test(h))).toBe(false);
    expect(listedFor("steps", "phase2").some((b) => b.action === "next-step")).toBe(false);
    // n stays bound in phase 2, where the page says why it does nothing there
    expect(press("n")).toBe("next-step");
  });
});

describe("keysNamed", () => {
  const screen = (touch: boolean) => (query: string) => ({ matches: touch && query === TOUCH_SCREEN });
  it("names keys while they act, except on a touch screen", () => {
    expect(keysNamed(true, screen(false))).toBe(true);
    expect(keysNamed(true, screen(true))).toBe(false);
    expect(keysNamed(false, screen(false))).toBe(false);
    expect(keysNamed(true, null)).toBe(true); // no matchMedia: as a desktop
  });

  it("saves a text box on Enter, but not with Shift, while composing, or on a touch screen", () => {
    const key = (k: string, shiftKey = false, isComposing = false) => ({ key: k, shiftKey, isComposing });
    expect(savesTextBox(key("Enter"), screen(false))).toBe(true);
    expect(savesTextBox(key("Enter", true), screen(false))).toBe(false); // a new line
    expect(savesTextBox(key("Enter", false, true), screen(false))).toBe(false); // an input method's Enter
    expect(savesTextBox(key("a"), screen(false))).toBe(false);
    expect(savesTextBox(key("Enter"), screen(true))).toBe(false); // a phone's return key: a new line
  });
});
