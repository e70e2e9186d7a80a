/**
 * Entry of the lead's and ML engineer's pages (new project, settings, data and automatic labels,
 * members, export, token). Each feature starts only where its page has the matching element, so one small bundle
 * serves them all; the Markdown preview (KaTeX) loads on demand, only on pages with guidelines.
 */
import "./pages.css";

import { startAutolabelForm } from "./autolabel";
import { startExportForm } from "./exports";
import { startImportForm } from "./imports";
import {
  focusArrival,
  startCopyButtons,
  startGuidelineTemplates,
  startSlugSuggestion,
  startTaskKindFields,
} from "./forms";

startSlugSuggestion(document);
startCopyButtons(document);
startGuidelineTemplates(document);
startTaskKindFields(document);
startImportForm(document);
startAutolabelForm(document);
startExportForm(document);
focusArrival(document);

const source = document.querySelector<HTMLTextAreaElement>("[data-markdown-source]");
const preview = document.querySelector<HTMLElement>("[data-markdown-preview]");
if (source && preview) {
  void import("./preview").then(({ startPreview }) => startPreview(source, preview));
}
