/** The shape of GET /api/v1/projects/{slug}/stats/ (labeling_api/serializers_stats.py). */
import type { GenerationProgress, HeldOut, Pace } from "./format";

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

export interface Series {
  buckets: string[];
  labels: number[];
  steps: number[];
  by_annotator: { annotator: string; labels: number[] }[];
}

export interface AnnotatorRow {
  annotator: string;
  labels: number;
  steps: number;
  positive_rate: number | null;
  neutral_rate: number | null;
  negative_rate: number | null;
  flag_rate: number | null;
  median_seconds_per_solution: number | null;
  median_seconds_per_step: number | null;
  last_label_at: string | null;
  gold_accuracy: number | null;
  gold_first_error_rate: number | null;
  gold_solutions: number;
  screening_status: string | null;
  screening_agreement: number | null;
  below_threshold: boolean;
}

export interface Run {
  id: number;
  status: string;
  label_count: number;
  heldout: HeldOut;
  is_active: boolean;
  activated_at: string | null;
  created_at: string | null;
  finished_at: string | null;
  error: string;
}

export interface Stats {
  project: { slug: string; name: string; overlap: number; screening_threshold: number; current_generation: number };
  generated_at: string;
  snapshot_at: string;
  progress: {
    solutions_total: number;
    solutions_labeled: number;
    solutions_open: number;
    solutions_complete: number;
    labels_remaining: number;
    steps_total: number;
    steps_labeled: number;
    labels: number;
    by_generation: GenerationProgress[];
    pace: Pace;
    eta_hours: number | null;
    eta_at: string | null;
  };
  throughput: {
    hourly: Series;
    daily: Series;
    labels_last_24h: number;
    median_seconds_per_solution: number | null;
    median_seconds_per_step: number | null;
  };
  labels: {
    ratings: { positive: number; neutral: number; negative: number; unrated: number };
    steps: number;
    flagged: number;
    flag_rate: number | null;
    alternatives: number;
    finish_reasons: Record<string, number>;
    wrong_answer: { labeled_solutions: number; wrong: number; correct: number; ungraded: number; share: number | null };
  };
  quality: {
    threshold: number;
    annotators: AnnotatorRow[];
    agreement: {
      overlap: number;
      solutions_compared: number;
      sample_limit: number;
      sampled: boolean;
      alpha: number | null;
      pairs: number;
      first_error_agreement: number | null;
    };
  };
  model: {
    active_run: Run | null;
    latest_run: Run | null;
    in_progress: boolean;
    runs: Run[];
    curve_metrics: string[];
    learning_curve: ({ run: number; label_count: number } & HeldOut)[];
  };
  queue: { selection_strategy: string; open_by_strategy: { strategy: string; open: number }[] };
}
