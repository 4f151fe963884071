import { Inject, Injectable, Logger } from '@nestjs/common';
import { WORKER_POOL, type WorkerPool } from '../../common/worker-pool/worker-pool.js';
import type { SkillWorkerTasks } from '../executors/skill-worker-tasks.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Tenant } from '../../common/auth/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { redactText } from '../../common/secrets/secret-redaction.js';
import { ToolEvents } from '../../tools/events/tool-events.js';
import { McpSkillImporter, toSkillTool } from '../mcp/mcp-skill-importer.js';
import { type SkillToolSpec, vetSkillShapes } from '../skill-compiler.js';
import { SkillTools } from '../skill-tools.js';
import { skillNotFound, skillTooLarge } from '../skills.errors.js';
import { SKILL_CHANGES_KEPT_DECIDED, SKILL_CHANGES_MAX_BYTES, SKILL_MAX_BYTES, SKILL_MAX_TOOLS } from '../skills.limits.js';
import { changeBytes, ReviewQueueRoom } from '../definitions/review-queue-room.js';
import type { LockedSkill, SkillRecord } from '../skills.repository.js';
import { SkillsRepository } from '../skills.repository.js';
import { checkToolCollisions } from '../tool-collisions.js';
import {
  definitionDiff,
  definitionHash,
  incompatibleChange,
  type UpstreamDefinition,
  upstreamDefinition,
} from '../definitions/definition-pin.js';
import { reviewDescriptions } from '../definitions/description-rules.js';
import { SkillChangeDto, SkillChangeListResponseDto, SkillRefreshResponseDto } from './dto/skill-change.dto.js';
import {
  type NewSkillChange,
  type SkillChangeRecord,
  SkillChangesRepository,
  type SkillChangeStatus,
} from '../definitions/skill-changes.repository.js';
import { changeAlreadyDecided, changeNotFound, notAnMcpSkill, sourceUnavailable, tooManyTools } from './skill-review.errors.js';

// Pinned definitions: an MCP source is read again (on a schedule and on demand) and each answer compared
// with what was reviewed. A changed definition is recorded with its diff and sent as tool.definition_changed;
// the reviewed one stays served (the tool is withheld instead when the new input schema would refuse what
// the old accepted) until an admin accepts or rejects the change.
@Injectable()
export class SkillReviewService {
  private readonly logger = new Logger('SkillReview');

  constructor(
    private readonly skills: SkillsRepository,
    private readonly changes: SkillChangesRepository,
    private readonly importer: McpSkillImporter,
    private readonly skillTools: SkillTools,
    private readonly events: ToolEvents,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<SkillWorkerTasks>,
  ) {}

  async list(tenantId: string, skillId: string, status: SkillChangeStatus | 'all' = 'pending'): Promise<SkillChangeListResponseDto> {
    const skill = await this.skills.findById(tenantId, skillId);
    if (!skill) throw skillNotFound(skillId);
    const rows = await this.changes.list(tenantId, skillId, status === 'all' ? null : status);
    return { items: rows.map((row) => SkillChangeDto.from(row)) };
  }

  // Reads the source now; answers the changes left pending after it. A source that asks for OAuth is read with
  // the connection of the user the request names (Toolgate-User), else the tenant's own.
  async refresh(tenantId: string, skillId: string, user: string | null = null): Promise<SkillRefreshResponseDto> {
    const skill = await this.skills.findById(tenantId, skillId);
    if (!skill) throw skillNotFound(skillId);
    if (!skill.source) throw notAnMcpSkill(skillId);
    let upstream: Tool[];
    try {
      upstream = await this.importer.readTools(tenantId, skill.source, user);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw sourceUnavailable(redactText((error as Error).message));
    }
    await this.skills.markSourceChecked(tenantId, skillId);
    const pending = await this.reconcile(tenantId, skillId, upstream);
    return { checkedAt: new Date().toISOString(), pending: (pending ?? []).map((row) => SkillChangeDto.from(row)) };
  }

  // The scheduled read of one claimed skill (a source that asks for OAuth: with the tenant's own connection):
  // failures are logged, the next interval tries again.
  async refreshQuietly(tenantId: string, skillId: string): Promise<void> {
    const skill = await this.skills.findById(tenantId, skillId);
    if (!skill?.source) return;
    try {
      const upstream = await this.importer.readTools(tenantId, skill.source, null);
      await this.reconcile(tenantId, skillId, upstream);
    } catch (error) {
      this.logger.warn({ msg: 'Could not read an MCP source again', skillId, error: redactText((error as Error).message) });
    }
  }

  async accept(tenant: Tenant, skillId: string, changeId: string): Promise<SkillChangeDto> {
    const decided = await this.decide(tenant, skillId, changeId, 'accepted', async (locked, change) => {
      const tools = applyChange(locked.skill, change);
      // A new tool must not clash with another skill's in any project this one is enabled on; a changed
      // schema must pass the vetting a registration's does (both refuse and leave the change pending).
      if (change.kind === 'added') await locked.checkProjects((project) => checkToolCollisions(project, skillId, tools));
      // Held to a registration's limits: the skill's tools, their bytes as stored, and every schema vetted
      // in the worker pool, as a registration's (an Ajv compile per schema stays off the event loop).
      if (tools.length > SKILL_MAX_TOOLS) throw tooManyTools(tools.length, SKILL_MAX_TOOLS);
      const bytes = Buffer.byteLength(JSON.stringify(tools));
      if (bytes > SKILL_MAX_BYTES) throw skillTooLarge(bytes, SKILL_MAX_BYTES);
      vetSkillShapes(tools);
      await this.pool.run('vetSkill', { tools }, { key: tenant.tenantId });
      return tools;
    });
    return SkillChangeDto.from(decided);
  }

  // The pinned definition stays: a tool withheld for this change is served again as it was reviewed.
  async reject(tenant: Tenant, skillId: string, changeId: string): Promise<SkillChangeDto> {
    const decided = await this.decide(tenant, skillId, changeId, 'rejected', (locked, change) => {
      const tools = locked.skill.tools.map((tool) =>
        upstreamName(tool) === change.tool && tool.withheld === 'incompatible_change' ? served(tool) : tool,
      );
      return Promise.resolve(
        change.kind === 'added' ? tools.filter((tool) => !(upstreamName(tool) === change.tool && tool.withheld !== undefined)) : tools,
      );
    });
    return SkillChangeDto.from(decided);
  }

  private async decide(
    tenant: Tenant,
    skillId: string,
    changeId: string,
    status: 'accepted' | 'rejected',
    toolsAfter: (locked: LockedSkill, change: SkillChangeRecord) => Promise<SkillToolSpec[]>,
  ): Promise<SkillChangeRecord> {
    const result = await this.skills.withLockedSkill(tenant.tenantId, skillId, async (locked) => {
      const change = await this.changes.find(tenant.tenantId, skillId, changeId, locked.tx);
      if (!change) throw changeNotFound(changeId);
      if (change.status !== 'pending') throw changeAlreadyDecided(change.id, change.status);
      const before = JSON.stringify(locked.skill.tools);
      const tools = await toolsAfter(locked, change);
      if (JSON.stringify(tools) !== before) await locked.saveTools(tools);
      return this.changes.decide(change.id, status, { keyId: tenant.apiKeyId, name: tenant.keyName }, locked.tx);
    });
    if (!result) throw skillNotFound(skillId);
    this.skillTools.forgetTenant(tenant.tenantId);
    return result;
  }

  // Compares the upstream's answer with the pinned definitions, under the skill's lock (so two instances
  // reading the same source at once record each change once). Answers the pending changes after it.
  private async reconcile(tenantId: string, skillId: string, upstream: Tool[]): Promise<SkillChangeRecord[] | null> {
    const raised: SkillChangeRecord[] = [];
    let unraised = 0;
    let projectIds: readonly string[] = [];
    let toolsChanged = false;
    const pendingAfter = await this.skills.withLockedSkill(tenantId, skillId, async (locked) => {
      projectIds = locked.projectIds;
      const { skill, tx } = locked;
      const pending = new Map((await this.changes.pending(skillId, tx)).map((change) => [change.tool, change]));
      const answered = new Map(upstream.map((tool) => [tool.name, upstreamDefinition(tool)]));
      const room = new ReviewQueueRoom(await this.changes.queued(skillId, tx), SKILL_CHANGES_MAX_BYTES, SKILL_CHANGES_KEPT_DECIDED);
      // A tool the upstream offered and no longer does has nothing left to add.
      for (const [name, open] of pending) {
        if (open.kind !== 'added' || answered.has(name)) continue;
        await this.changes.decide(open.id, 'superseded', null, tx);
        pending.delete(name);
      }
      const tools = [...skill.tools];
      const found: NewSkillChange[] = [];
      for (const [index, tool] of tools.entries()) {
        const name = upstreamName(tool);
        if (name === null) continue;
        const now = answered.get(name);
        const pinned = tool.pin?.upstream ?? null;
        if (!now) {
          found.push({
            tool: name,
            kind: 'removed',
            previous: pinned,
            proposed: null,
            proposedHash: null,
            diff: definitionDiff(pinned, undefined),
            flags: [],
            incompatible: false,
          });
          continue;
        }
        const hash = definitionHash(now);
        if (hash === tool.pin?.hash) {
          // The upstream went back to what was reviewed: nothing left to decide, and nothing withheld for it.
          const stale = pending.get(name);
          if (stale && stale.kind !== 'added') {
            await this.changes.decide(stale.id, 'superseded', null, tx);
            pending.delete(name);
            if (tool.withheld === 'incompatible_change') {
              tools[index] = served(tool);
              toolsChanged = true;
            }
          }
          continue;
        }
        const why = pinned ? incompatibleChange(pinned.inputSchema, now.inputSchema) : null;
        const kind = tool.withheld === 'flagged' ? 'added' : 'changed';
        found.push({
          tool: name,
          kind,
          previous: pinned,
          proposed: now,
          proposedHash: hash,
          diff: definitionDiff(pinned, now),
          flags: reviewDescriptions(now),
          incompatible: why !== null,
        });
      }
      // A source imported whole offers what it adds to review; one imported by name only ever has those.
      if (!skill.source?.tools) {
        const known = new Set(tools.map(upstreamName));
        for (const [name, now] of answered) {
          if (known.has(name)) continue;
          found.push({
            tool: name,
            kind: 'added',
            previous: null,
            proposed: now,
            proposedHash: definitionHash(now),
            diff: definitionDiff(undefined, now),
            flags: reviewDescriptions(now),
            incompatible: false,
          });
        }
      }
      for (const change of found) {
        const open = pending.get(change.tool);
        if (!(open && open.proposedHash === change.proposedHash && open.kind === change.kind)) {
          // A definition an admin rejected is not raised again (and withholds nothing: the reviewed one was chosen).
          if (await this.changes.wasRejected(skillId, change.tool, change.proposedHash, tx)) continue;
          // Nor is one that could never be accepted (a skill holds SKILL_MAX_TOOLS tools of SKILL_MAX_BYTES in
          // all), nor one the review queue has no room for: the reviewed definitions stay served meanwhile.
          const bytes = changeBytes(change);
          const adding = !open && change.kind === 'added';
          const added = [...pending.values()].filter((c) => c.kind === 'added').length;
          if (bytes > SKILL_MAX_BYTES || (adding && tools.length + added >= SKILL_MAX_TOOLS) || !room.take(bytes, open?.id)) {
            unraised += 1;
            continue;
          }
          const row = open ? await this.changes.replace(open.id, change, tx) : await this.changes.create(tenantId, skillId, change, tx);
          pending.set(change.tool, row);
          raised.push(row);
        }
        const index = tools.findIndex((tool) => upstreamName(tool) === change.tool);
        if (index < 0) continue;
        const withheld = change.incompatible
          ? 'incompatible_change'
          : tools[index].withheld === 'incompatible_change'
            ? undefined
            : tools[index].withheld;
        if (withheld !== tools[index].withheld) {
          tools[index] = withheld ? { ...tools[index], withheld } : served(tools[index]);
          toolsChanged = true;
        }
      }
      if (toolsChanged) await locked.saveTools(tools);
      await this.changes.deleteDecided(skillId, room.evicted, tx);
      return [...pending.values()];
    });
    if (toolsChanged) this.skillTools.forgetTenant(tenantId);
    if (unraised > 0)
      this.logger.warn({
        msg: 'Changes of an MCP source were not raised for review: too large, too many tools, or its queue is full',
        skillId,
        unraised,
      });
    for (const change of raised) {
      const withheld = change.incompatible || change.kind === 'added';
      for (const projectId of projectIds) {
        this.events.emit({
          type: 'tool.definition_changed',
          tenantId,
          projectId,
          tool: change.tool,
          skillId,
          changeId: change.id,
          kind: change.kind,
          incompatible: change.incompatible,
          withheld,
          flags: change.flags.map((flag) => flag.rule),
        });
      }
    }
    return pendingAfter;
  }
}

// The upstream name of an MCP source's tool; null for a tool of another executor.
const upstreamName = (tool: SkillToolSpec): string | null => (tool.executor.type === 'mcp' ? tool.executor.tool : null);

function served(tool: SkillToolSpec): SkillToolSpec {
  const { withheld: _withheld, ...rest } = tool;
  return rest;
}

// The skill's tools with an accepted change applied: the proposed definition pinned and served, a new tool
// added, a dropped one removed.
function applyChange(skill: SkillRecord, change: SkillChangeRecord): SkillToolSpec[] {
  const index = skill.tools.findIndex((tool) => upstreamName(tool) === change.tool);
  if (change.kind === 'removed') return skill.tools.filter((_, i) => i !== index);
  const proposed = change.proposed as UpstreamDefinition;
  const source = skill.source ?? sourceOf(skill.tools[index]);
  const tool = { ...toSkillTool(proposed, source, true), ...(index >= 0 && { name: skill.tools[index].name }) };
  if (index < 0) return [...skill.tools, tool];
  return skill.tools.map((current, i) =>
    i === index
      ? { ...tool, ...(current.timeoutMs !== undefined && { timeoutMs: current.timeoutMs }), ...(current.mode && { mode: current.mode }) }
      : current,
  );
}

function sourceOf(tool: SkillToolSpec | undefined): { url: string; headers?: Record<string, string> } {
  if (tool?.executor.type !== 'mcp') throw new Error('a change of a skill without an MCP source');
  return { url: tool.executor.url, ...(tool.executor.headers && { headers: tool.executor.headers }) };
}
