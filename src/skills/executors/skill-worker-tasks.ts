import { toolErrorCodec } from '../../execution/tool-error.js';
import { capUpstreamAnswer } from '../mcp/upstream-answer-caps.js';
import { runSkillToolInWorker } from './skill-runner.js';
import { type SkillToolSpec, vetSkillTools } from '../skill-compiler.js';

export interface CapUpstreamAnswerTask {
  bytes: Uint8Array;
  contentType: string;
  maxContentItems: number;
}

// Command skill tools registered with mode "sync" run in the app's worker pool, and so does the parsing of a
// large answer of an upstream MCP server (its bytes are decoded on the thread, too), and the vetting of a
// registered skill's schemas (an Ajv compile each: seconds for a large skill, off the event loop).
export const skillWorkerTasks = {
  runSkillTool: runSkillToolInWorker,
  vetSkill: ({ tools }: { tools: SkillToolSpec[] }) => {
    vetSkillTools(tools);
    return Promise.resolve(true);
  },
  capUpstreamAnswer: ({ bytes, contentType, maxContentItems }: CapUpstreamAnswerTask) =>
    Promise.resolve(
      capUpstreamAnswer({
        body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
        contentType,
        maxContentItems,
      }),
    ),
};

export type SkillWorkerTasks = typeof skillWorkerTasks;

export const skillWorkerErrors = [toolErrorCodec];
