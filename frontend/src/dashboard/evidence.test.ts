import { describe, expect, it } from "vitest";

import { type Evidence, strategyCaveat } from "./evidence";

const row = (set: string, split: string, efficiency: number | null, diff: number, hi: number) => ({
  set,
  split,
  efficiency,
  aulc_diff: diff,
  aulc_diff_ci: [diff - 0.02, hi],
});

const evidence: Evidence = {
  seeds: 5,
  strategies: {
    answer_stratified: [row("gsm8k", "development", 1.2, 0.01, 0.03), row("math", "vault", 0.8, 0.004, 0.02)],
    convincing_wrong: [row("gsm8k", "development", null, -0.047, -0.02), row("mrben", "vault", 0.5, -0.01, 0.01)],
  },
};

describe("strategyCaveat", () => {
  it("says where an order is below random and how often it is slower than random", () => {
    const text = strategyCaveat("convincing_wrong", evidence);
    expect(text).toMatch(/^Caution: In the offline simulation \(5 seeds, 2 data sets/);
    expect(text).toContain("the Convincing wrong answer order's area under the learning curve (first-error F1) minus random's ranged from -0.047 to -0.010 over the 2 splits");
    expect(text).toContain("One crossing point swings with noise; the area is the measure to trust.");
    expect(text).toContain("below random with its 95% interval under zero on GSM8K (development).");
    expect(text).toContain("on 2 of 2 splits, and never reached it on 1 of these; where it reached it, its label efficiency was 0.50x");
    expect(text).toContain("The default, Answer-stratified, needs no model and was kept by a rule written before these runs.");
  });

  it("reads naturally when the order never reached random's final F1 on any slower split", () => {
    const never = (n: number): Evidence => ({
      seeds: 5,
      strategies: { uncertainty: Array.from({ length: n }, (_, i) => row(`set${i}`, "vault", null, -0.01, 0.01)) },
    });
    expect(strategyCaveat("uncertainty", never(2))).toContain("on 2 of 2 splits, and never reached it on any of these.");
    expect(strategyCaveat("uncertainty", never(1))).toContain("on 1 of 1 splits, and never reached it there.");
    expect(strategyCaveat("uncertainty", never(2))).not.toContain("all of these");
  });

  it("words the default without a caution when no interval is under zero", () => {
    const text = strategyCaveat("answer_stratified", evidence);
    expect(text).toMatch(/^In the offline simulation/);
    expect(text).toContain("with no 95% interval under zero.");
    expect(text).toContain("on 1 of 2 splits; where it reached it, its label efficiency was 0.80x to 1.20x");
    expect(text).toContain("It needs no model and stays the default by a rule written before these runs");
  });

  it("names where an order's interval is over zero, beside where it is under", () => {
    const mixed: Evidence = {
      seeds: 5,
      strategies: {
        value: [row("math", "vault", 2.5, 0.05, 0.08), row("mrben", "vault", null, -0.04, -0.01)],
        uncertainty: [row("math", "vault", 2.5, 0.05, 0.08)],
      },
    };
    mixed.strategies.value[0].aulc_diff_ci = [0.02, 0.08];
    mixed.strategies.uncertainty[0].aulc_diff_ci = [0.02, 0.08];
    expect(strategyCaveat("value", mixed)).toContain(
      "above random with its 95% interval over zero on MATH (vault); below random with its 95% interval under zero on MR-Ben (vault). ",
    );
    expect(strategyCaveat("uncertainty", mixed)).toContain(
      "above random with its 95% interval over zero on MATH (vault); no 95% interval under zero. ",
    );
    expect(strategyCaveat("uncertainty", mixed)).not.toContain("Caution");
  });

  it("reads mix as the convincing_wrong runs it mostly is, and says nothing for random or unknown orders", () => {
    expect(strategyCaveat("mix", evidence)).toMatch(
      /^Caution: Mix \(PRM800K's\) is mostly the Convincing wrong answer order; these are its runs\. In the/,
    );
    expect(strategyCaveat("random", evidence)).toBe("");
    expect(strategyCaveat("unheard_of", evidence)).toBe("");
  });

  it("has words for every order a lead can choose, from the shipped results", () => {
    for (const s of ["answer_stratified", "uncertainty", "bald", "convincing_wrong", "value", "mix"]) {
      const text = strategyCaveat(s);
      expect(text).toMatch(/offline simulation \(\d+ seeds, 5 data sets/);
      expect(text).toContain("It needed more labels than random to reach random's final F1 on");
    }
  });
});
