/** Tool calls (POST /api/tool-calls and the edge's governed path): what their routes use. */
import type { Registry } from '@agw/shared';
import type { ToolCallPipeline } from '../pipeline/tool-call.pipeline';
import type { SettingsService } from '../tenants/settings.service';

export interface ToolCallsFeature {
  pipeline: ToolCallPipeline;
  registry: Registry;
  settings: SettingsService;
}
