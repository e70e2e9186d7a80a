/** What Django puts in the dashboard page; the API's shapes are generated (../api/types.ts). */

export interface DashboardConfig {
  project: { slug: string; name: string };
  urls: {
    stats: string;
    annotators_csv: string;
    training_runs: string;
    export_prm800k: string;
    export_trl: string;
    export_jobs: string;
    api_docs: string;
  };
  csrf_token: string;
}

