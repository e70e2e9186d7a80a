/** Entry of the annotator workspace bundle: reads the config Django put in the page and mounts. */
import "katex/dist/katex.min.css";
import "./workspace.css";

import { Workspace, type WorkspaceConfig } from "./app";
import { CompareWorkspace } from "./compare";

const root = document.getElementById("sl-workspace");
const configEl = document.getElementById("config");
if (root && configEl?.textContent) {
  const config = JSON.parse(configEl.textContent) as WorkspaceConfig;
  if (config.project.task_kind === "compare") new CompareWorkspace(root, config).start();
  else new Workspace(root, config).start();
}
