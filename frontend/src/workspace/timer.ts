/**
 * Active-time timer for `total_time_ms`: counts only while the page is visible and the annotator
 * has shown activity in the last `idleMs`. Reading counts as work, so after the last input the
 * timer keeps running for up to `idleMs`, then stops at (last activity + idleMs).
 */
export class ActiveTimer {
  private accumulated: number;
  private runningSince: number | null = null;
  private lastActivity: number;
  private visible = true;

  constructor(
    initialMs: number,
    private readonly now: () => number = () => Date.now(),
    private readonly idleMs = 60_000,
  ) {
    this.accumulated = Math.max(0, initialMs);
    this.lastActivity = now();
  }

  /** Input from the annotator (key, pointer, scroll): starts or keeps the clock running. */
  activity(): void {
    const t = this.now();
    this.settleIdle(t);
    this.lastActivity = t;
    if (this.visible && this.runningSince === null) this.runningSince = t;
  }

  setVisible(visible: boolean): void {
    const t = this.now();
    this.settleIdle(t);
    this.visible = visible;
    if (!visible && this.runningSince !== null) {
      this.accumulated += t - this.runningSince;
      this.runningSince = null;
    } else if (visible) {
      this.activity();
    }
  }

  /** Stop the clock if the idle limit has passed (call it from a periodic tick and before reads). */
  settleIdle(t: number = this.now()): void {
    if (this.runningSince === null) return;
    const idleEnd = this.lastActivity + this.idleMs;
    if (t > idleEnd) {
      this.accumulated += Math.max(0, idleEnd - this.runningSince);
      this.runningSince = null;
    }
  }

  get running(): boolean {
    this.settleIdle();
    return this.runningSince !== null;
  }

  elapsedMs(): number {
    const t = this.now();
    this.settleIdle(t);
    return this.accumulated + (this.runningSince === null ? 0 : t - this.runningSince);
  }
}
