// Session recordings: the sink the settings choose (a directory, volume.ts, or an S3 bucket,
// s3/), what every sink shares (sink.ts), the asciicast format (cast.ts), what a replay may write
// to a terminal (terminal.ts) and the reviewers' endpoint (route.ts).
import type { GatewayConfig } from "../config.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import { s3Sink } from "./s3/sink.js";
import type { RecordingSink } from "./sink.js";
import { volumeSink } from "./volume.js";

export { RECORDINGS_PATH, recordingsRoute, type RecordingsRouteOptions } from "./route.js";
export type { RecordingSummary } from "./cast.js";

/** The sink the settings choose: the S3 bucket, the directory, or none (nothing is recorded). */
export function recordingSink(config: GatewayConfig, logger: Logger, metrics: Metrics): RecordingSink | null {
  if (config.recordS3Bucket) return s3Sink(config, logger, metrics);
  if (config.recordDir) return volumeSink(config, logger, metrics);
  return null;
}
