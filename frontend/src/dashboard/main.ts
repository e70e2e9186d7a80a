/** Entry of the dashboard bundle: reads the config Django put in the page and draws the charts. */
import "uplot/dist/uPlot.min.css";
import "./dashboard.css";

import { Dashboard } from "./app";
import { showServiceHealth } from "./health";
import type { DashboardConfig } from "./types";

const root = document.getElementById("sl-dashboard");
const configEl = document.getElementById("dashboard-config");
if (root && configEl?.textContent) {
  const config = JSON.parse(configEl.textContent) as DashboardConfig;
  void new Dashboard(root, config).start();
  // Tell the lead when retraining and exports are waiting on an unreachable broker.
  void showServiceHealth(root);
  window.setInterval(() => void showServiceHealth(root), 60_000);
}
