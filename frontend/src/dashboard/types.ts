/** What Django puts in the dashboard page; the API's shapes are generated (../api/types.ts). */

export interface DashboardConfig {
  project: { slug: string; name: string };
  /** "steps" or "compare" (pairwise preferences: the pair section and a reward-model curve). */
  task_kind: string;
  urls: {
    stats: string;
    annotators_csv: string;
    /** The solutions whose labels differ on the first error (steps projects). */
    disagreements: string;
    training_runs: string;
    export_prm800k: string;
    export_trl: string;
    export_jobs: string;
    api_docs: string;
    /** Compare projects only. */
    compare_stats?: string;
  };
  csrf_token: string;
  /** The user may open the admin (leads are staff): the disagreements table links into it. */
  admin?: boolean;
}

