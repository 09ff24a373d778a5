export {
  createToolActivities,
  createToolRunner,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  type ToolActivitiesConfig,
  type ToolRunner,
} from './tool-activities';
export { compileHttpAllowlist, HTTP_ALLOWLIST_ENV, parseHttpAllowlist, type HostAllowlist } from './http-allowlist';
export { WORKSPACE_ENV } from './workspace-path';
export type { ToolRunContext } from './tool-run-context';
