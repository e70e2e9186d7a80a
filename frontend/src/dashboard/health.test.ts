import { describe, expect, it } from "vitest";

import { healthMessage } from "./health";

const ok = { database: true, broker: true, degraded: false, waiting: { exports: 0, training_runs: 0 } };

describe("healthMessage", () => {
  it("says nothing when all is well", () => {
    expect(healthMessage(ok)).toBeNull();
  });

  it("tells the lead that jobs wait while the broker is down", () => {
    const message = healthMessage({ ...ok, broker: false, degraded: true, waiting: { exports: 2, training_runs: 1 } });
    expect(message).toContain("task broker is unreachable");
    expect(message).toContain("2 exports and 1 training run waiting.");
  });

  it("reads an anonymous answer, which has no waiting counts", () => {
    const message = healthMessage({ database: true, broker: false, degraded: true });
    expect(message).toContain("task broker is unreachable");
    expect(message).not.toContain("waiting.");
  });

  it("reports a database outage first", () => {
    expect(healthMessage({ ...ok, database: false, broker: false, degraded: true })).toContain("database");
  });
});
