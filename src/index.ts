import { createLocalplane } from './localplane.ts';
import type { HarLog } from './recording/har.ts';
import { verifyWith, type VerifyOptions, type VerifyReport } from './recording/verify.ts';

export {
  createLocalplane,
  start,
  type CreateOptions,
  type InProcessLocalplane,
  type Localplane,
  type ResetScope,
  type StartOptions,
} from './localplane.ts';
export type { ProgressEvent, ProgressListener } from './progress.ts';
export { DEFAULT_ENDPOINT_ALIASES } from './destinations/endpoints.ts';
export { SnapshotFileError } from './snapshots/format.ts';
export {
  fixturesFromRecording,
  FromRecordingError,
  type FromRecordingOptions,
  type FromRecordingReport,
} from './recording/fixtures.ts';
export { record, RecordOptionError, type Recorder, type RecordOptions } from './recording/record.ts';
export type { InstanceClock } from './admin/instance-clock.ts';
export type { ObjstoreStorageKind } from './objstore/types.ts';
export type { Limits, LimitsPatch } from './config.ts';
export type { JournalBody, JournalEntry } from './journal/schemas.ts';
export type { FaultRuleInput, FaultRuleView } from './journal/fault-rules.ts';
export type { JournalFilterInput } from './journal/filter.ts';
export type { FaultRulesApi, RequestsApi } from './journal/programmatic.ts';
export {
  connect,
  LocalplaneError,
  type AdminMethods,
  type ConnectOptions,
  type LocalplaneClient,
  type ObjectsOptions,
  type PreviewOptions,
} from './admin/client.ts';
export type {
  ClockRun,
  ClockState,
  FaultsState,
  FixturesView,
  Health,
  ListedTask,
  State,
  Task,
  TierChange,
} from './admin/schemas.ts';
export type { StateQuery } from './admin/state.ts';
export type { ExportRunFaultInput, ValidationFaultInput } from './bulk-exports/faults.ts';
export type { RevisionFaultInput } from './deployments/faults.ts';
export type {
  DeploymentResponse,
  DeploymentStatus,
  RevisionHistory,
  RevisionResponse,
  RevisionStatus,
} from './deployments/schemas.ts';
export type { NearMisses, RequestStats } from './journal/schemas.ts';
export type { NearMissesOptions, RequestStatsOptions } from './journal/programmatic.ts';
export type { BucketView, ObjectsPage, ObjectView } from './objstore/browser-routes.ts';
export type { ObjstoreKeyInput, ObjstoreKeyView } from './objstore/key-routes.ts';
export type { SavedSnapshot } from './snapshots/folder.ts';
export type { Restored, SavedSnapshots } from './snapshots/routes.ts';
export type { RunsAdded, RunsAddition } from './tracing/knob-routes.ts';
export type { PreviewResponse, SqlRequest, SqlResponse } from './warehouse/schemas.ts';
export type { Tier } from './workspaces/store.ts';
export {
  formatVerifyReport,
  VerifyError,
  type ExchangeVerdict,
  type Outcome,
  type VerifyOptions,
  type VerifyReport,
} from './recording/verify.ts';
export { RecordingFileError, type HarLog } from './recording/har.ts';

/**
 * Replays a recording (a HAR file's path, or its `log`) against localplane and compares each
 * answer with the recorded one (docs/recording.md#verify): into a fresh instance of its own,
 * its clock frozen, unless `url` names a running one.
 */
export function verifyRecording(recording: string | HarLog, options: VerifyOptions = {}): Promise<VerifyReport> {
  return verifyWith(recording, options, () => createLocalplane({ freezeClock: true }));
}
