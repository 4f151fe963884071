import { toolErrorCodec } from '../../execution/tool-error.js';
import { runSkillToolInWorker } from './skill-runner.js';

// Tenant skill tools registered with mode "sync" run in the app's worker pool.
export const skillWorkerTasks = { runSkillTool: runSkillToolInWorker };

export type SkillWorkerTasks = typeof skillWorkerTasks;

export const skillWorkerErrors = [toolErrorCodec];
