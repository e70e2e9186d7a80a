/**
 * Enter pressed again just after a submit lands on the next task: it is the previous submit's key
 * again (a double press, a key held a moment), not a submit of a task not yet looked at. Both
 * workspaces (step labels and compare) ignore it, so the "Submitted" note stays on screen instead
 * of a "not ready" or "choose first" message about work nobody started.
 */

/** How long after a task appears an Enter on it, untouched, is taken as a repeat. */
export const REPEATED_SUBMIT_MS = 1_000;

export class RepeatedSubmitGuard {
  private shownAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A task was put on screen. */
  shown(): void {
    this.shownAt = this.now();
  }

  /** Whether a submit that is not ready, on a task with nothing done yet, is such a repeat. */
  isRepeat(untouched: boolean): boolean {
    return untouched && this.now() - this.shownAt < REPEATED_SUBMIT_MS;
  }
}
