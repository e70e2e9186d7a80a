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
