/**
 * The API's shapes as the pages use them, taken from the generated OpenAPI types (schema.d.ts,
 * `make api-types`): a serializer change shows up here as a type error, not as a runtime surprise.
 */
import type { components } from "./schema";

type Schemas = components["schemas"];

export type TaskOut = Schemas["Task"];
export type SubmitOut = Schemas["SubmitOut"];
export type SkipOut = Schemas["SkipOut"];
export type MyProgress = Schemas["MyProgress"];
export type RefusedSubmit = Schemas["RefusedSubmit"];
export type Health = Schemas["Health"];

export type ProjectStats = Schemas["ProjectStats"];
export type Series = Schemas["Series"];
export type AnnotatorRow = Schemas["AnnotatorRow"];
export type Run = Schemas["Run"];
export type HeldOut = Schemas["Heldout"];
export type CurvePoint = Schemas["CurvePoint"];
export type Savings = Schemas["Savings"];
export type GenerationProgress = Schemas["GenerationProgress"];
export type Progress = Schemas["Progress"];
export type Pace = Schemas["Pace"];
export type PairProgress = Schemas["PairProgress"];
export type TrainingRun = Schemas["TrainingRun"];
export type TrainingRunRequested = Schemas["TrainingRunRequested"];
export type CompareStats = Schemas["CompareStats"];
export type Disagreements = Schemas["Disagreements"];
export type Share = Schemas["Share"];
