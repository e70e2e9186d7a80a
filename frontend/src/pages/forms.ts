/** Small form helpers: the slug suggested from the project name, and copy buttons. */

/** "Algebra, round 1" -> "algebra-round-1": what Django's SlugField accepts, 50 characters at most. */
export function slugify(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/g, "");
}

/** Fill the slug from the name until the user edits the slug themselves. */
export function startSlugSuggestion(root: ParentNode): void {
  const name = root.querySelector<HTMLInputElement>("[data-slug-source]");
  const slug = root.querySelector<HTMLInputElement>("[data-slug-target]");
  if (!name || !slug) return;
  let edited = slug.value !== "" && slug.value !== slugify(name.value);
  slug.addEventListener("input", () => {
    edited = slug.value !== "";
  });
  name.addEventListener("input", () => {
    if (!edited) slug.value = slugify(name.value);
  });
}

export function startCopyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    button.addEventListener("click", () => {
      const text = button.dataset.copy ?? "";
      void navigator.clipboard?.writeText(text).then(
        () => {
          button.textContent = "Copied";
        },
        () => {
          button.textContent = "Select and copy it";
        },
      );
    });
  }
}

/**
 * The new-project page's "Start from the guidelines for" links: replace the guidelines text in
 * place (the links reloaded the page, losing the name and every other field), with an undo. A
 * guidelines text that is still an untouched template follows the task kind and the kind of
 * solutions (a compare project gets the compare template: 1-3 mean how much better there).
 */
export function startGuidelineTemplates(root: Document): void {
  const data = root.getElementById("guidelines-templates")?.textContent;
  const text = root.querySelector<HTMLTextAreaElement>("textarea[name=guidelines]");
  const note = root.querySelector<HTMLElement>("[data-guidelines-replaced]");
  if (!data || !text || !note) return;
  const templates = JSON.parse(data) as Record<string, string>;
  const contentKind = root.querySelector<HTMLSelectElement>("select[name=content_kind]");
  const taskKind = root.querySelector<HTMLSelectElement>("select[name=task_kind]");
  const links = [...root.querySelectorAll<HTMLAnchorElement>("a[data-guidelines-kind]")];
  const untouched = () => Object.values(templates).some((t) => t.trim() === text.value.trim());
  const put = (kind: string, announce: boolean) => {
    const before = text.value;
    text.value = templates[kind] ?? before;
    text.dispatchEvent(new Event("input")); // the preview follows
    for (const a of links) a.toggleAttribute("aria-current", a.dataset.guidelinesKind === kind);
    if (!announce || before === text.value) return;
    const undo = document.createElement("button");
    undo.type = "button";
    undo.className = "sl-btn sl-small";
    undo.textContent = "Undo";
    undo.addEventListener("click", () => {
      text.value = before;
      text.dispatchEvent(new Event("input"));
      note.hidden = true;
    });
    note.replaceChildren(`Guidelines replaced with the ${kind} template. `, undo);
    note.hidden = false;
  };
  const kindNow = () => (taskKind?.value === "compare" ? "compare" : (contentKind?.value ?? "math"));
  for (const a of links) {
    a.addEventListener("click", (e) => {
      e.preventDefault();
      const kind = a.dataset.guidelinesKind ?? "math";
      if (contentKind) contentKind.value = kind;
      put(taskKind?.value === "compare" ? "compare" : kind, true);
    });
  }
  // A compare project has one template: the per-kind links changed nothing while Compare was chosen.
  const linksLine = root.querySelector<HTMLElement>("[data-guideline-links]");
  const showLinks = () => {
    if (linksLine) linksLine.hidden = taskKind?.value === "compare";
  };
  showLinks();
  for (const select of [contentKind, taskKind]) {
    select?.addEventListener("change", () => {
      if (untouched()) put(kindNow(), false);
      showLinks();
    });
  }
}

/**
 * Settings a compare project has no use for: pairs are not queued by a strategy, and nobody rates
 * steps. The same list as annotate.forms.ProjectSettingsForm.STEP_ONLY, which leaves them out of
 * a compare project's settings page.
 */
export const STEP_ONLY_FIELDS = [
  "selection_strategy",
  "control_share",
  "critique_required",
  "rate_observations",
  "screening_required",
  "screening_threshold",
] as const;

/**
 * Settings only a compare project has a use for: how many pairs an import makes per problem. The
 * same list as annotate.forms.ProjectSettingsForm.COMPARE_ONLY (a steps project with data has none).
 */
export const COMPARE_ONLY_FIELDS = ["pairs_per_problem"] as const;

/** Whether a field of the project form applies to the chosen task kind. */
export function fieldApplies(field: string, taskKind: string): boolean {
  const only: readonly string[] = taskKind === "compare" ? STEP_ONLY_FIELDS : COMPARE_ONLY_FIELDS;
  return !only.includes(field);
}

/**
 * A form with a task kind to choose (the new-project page; the settings page before the first
 * import): the step-only settings and their help hide while Compare is chosen, as a compare
 * project's settings page leaves them out, and the compare-only ones while Steps is chosen. They stay in the form, so going back to Steps keeps
 * what was typed; a field the server refused stays visible with its error.
 */
export function startTaskKindFields(root: ParentNode): void {
  const kind = root.querySelector<HTMLSelectElement>("select[name=task_kind]");
  if (!kind) return;
  const fields = [...STEP_ONLY_FIELDS, ...COMPARE_ONLY_FIELDS].flatMap((name) => {
    const box = root.querySelector(`[name="${name}"]`)?.closest<HTMLElement>(".sl-field");
    return box ? [[name, box] as const] : [];
  });
  // Settings whose help differs for pairs carry it (data-compare-help, from the Python form).
  const helps = [...root.querySelectorAll<HTMLElement>("[data-compare-help]")].flatMap((input) => {
    const help = input.closest(".sl-field")?.querySelector<HTMLElement>(".sl-help");
    return help ? [{ help, steps: help.textContent ?? "", pairs: input.dataset.compareHelp ?? "" }] : [];
  });
  const apply = () => {
    for (const [name, box] of fields) {
      box.hidden = !fieldApplies(name, kind.value) && !box.classList.contains("sl-field-error");
    }
    for (const { help, steps, pairs } of helps) help.textContent = kind.value === "compare" ? pairs : steps;
  };
  kind.addEventListener("change", apply);
  apply();
}

/**
 * After a form's post reloads the page, focus goes to its outcome, so a screen reader reads it and
 * the next Tab starts there (it was the top of the page): the form's own error, else the first
 * field in error (Django marks it aria-invalid and points it at its message), else what the post
 * made (a message, the invite link: `data-arrival-focus`).
 */
export function focusArrival(root: Document): void {
  const main = root.querySelector("main");
  if (!main) return;
  const target =
    main.querySelector<HTMLElement>(".errorlist.nonfield") ??
    main.querySelector<HTMLElement>('[aria-invalid="true"]') ??
    main.querySelector<HTMLElement>("[data-arrival-focus]");
  if (!target) return;
  if (!target.matches("input, select, textarea, button, a[href]")) target.tabIndex = -1;
  target.focus();
}
