import { stat } from 'node:fs/promises';
import { Metrics } from '../metrics/metrics.js';
import path from 'node:path';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { sandboxEtcFiles, systemMountArgs } from '../execution/process/sandbox/bwrap-profile.js';
import { prepareCallCgroups } from '../execution/process/sandbox/call-cgroup.js';
import { readCgroupSources } from '../common/cgroups/own-cgroup.js';
import { inspectBwrap, probeSandbox, type SandboxProblem } from '../execution/process/sandbox/sandbox-probe.js';
import type { BwrapSandbox, RunAs, SandboxSpec } from '../execution/process/sandbox/sandbox-spec.js';
import { sandboxUnavailable } from './sandbox.errors.js';
import { SandboxUids } from './sandbox-uids.js';
import { TenantCpuShares } from '../common/cpu-shares/tenant-cpu-shares.js';

// How the memory limit of commands is held: a cgroup v2 per command, or RLIMIT_AS with the runner's watchdog.
export interface MemoryEnforcement {
  by: 'cgroup' | 'rlimit';
  // The cgroup under which commands get theirs, or why there is none.
  detail: string;
}

export type SandboxState =
  | { mode: 'bwrap'; ready: true; version: string }
  | { mode: 'bwrap'; ready: false; problem: SandboxProblem }
  | { mode: 'none'; ready: true };

// Decides once, at start-up, how every tenant command is confined, and fails closed: when bubblewrap is
// missing or its probe fails, commands are refused with the reason and the fix, and the rest of the
// service runs on. Running commands unsandboxed takes COMMAND_SANDBOX=none, which production refuses.
@Injectable()
export class CommandSandbox implements OnModuleInit {
  private readonly logger = new Logger('Sandbox');
  private current: SandboxState = {
    mode: 'bwrap',
    ready: false,
    problem: { reason: 'the sandbox has not been probed yet', fix: 'wait for start-up to finish' },
  };
  private sandboxSpec: SandboxSpec | undefined;
  private memory: MemoryEnforcement = { by: 'rlimit', detail: 'commands have not been set up yet' };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: Metrics,
    private readonly uids: SandboxUids,
    private readonly cpuShares: TenantCpuShares,
  ) {
    metrics.gauge(
      'toolgate_sandbox_ready',
      '1 when commands can run (the sandbox passed its start-up probe, or COMMAND_SANDBOX=none), 0 when they are refused',
      () => (this.current.ready ? 1 : 0),
    );
  }

  async onModuleInit(): Promise<void> {
    const settings = this.config.tools.sandbox;
    // Commands never run as root: a root service hands them to the configured unprivileged uid.
    const runAs: RunAs | undefined = process.getuid?.() === 0 ? { uid: settings.uid, gid: settings.gid } : undefined;
    if (settings.mode === 'none') {
      this.sandboxSpec = { kind: 'none', runAs };
      this.current = { mode: 'none', ready: true };
      this.memory = { by: 'rlimit', detail: 'COMMAND_SANDBOX=none' };
      this.logger.warn(
        'COMMAND_SANDBOX=none: tenant commands run without a sandbox and can read the service environment, other workspaces and the network; never use this with tenants you do not trust',
      );
      return;
    }
    const binary = await inspectBwrap(settings.bwrapPath);
    if ('reason' in binary) return this.refuse(binary);
    const uid = runAs?.uid ?? process.getuid?.() ?? 0;
    const gid = runAs?.gid ?? process.getgid?.() ?? 0;
    const cgroups =
      settings.cgroup === 'off'
        ? { reason: 'SANDBOX_CGROUP=off' }
        : await Promise.resolve()
            .then(() => prepareCallCgroups(readCgroupSources()))
            .catch((err: Error) => ({ reason: `the service's cgroup cannot be read (${err.message})` }));
    let spec: BwrapSandbox = {
      kind: 'bwrap',
      bwrapPath: settings.bwrapPath,
      runAs,
      tmpSizeBytes: settings.tmpSizeBytes,
      systemMounts: systemMountArgs(),
      etcFiles: sandboxEtcFiles(uid, gid, '/tmp'),
      disableUserns: binary.disableUserns,
      ...('parent' in cgroups && { cgroup: cgroups }),
    };
    this.memory =
      'parent' in cgroups
        ? { by: 'cgroup', detail: `cgroup v${cgroups.version} ${cgroups.parent}` }
        : { by: 'rlimit', detail: cgroups.reason };
    let problem = await probeSandbox(spec);
    if (problem && spec.cgroup) {
      // Commands still run, their memory held the other way.
      this.memory = { by: 'rlimit', detail: `a command could not run in a cgroup of its own (${problem.reason})` };
      spec = { ...spec, cgroup: undefined };
      problem = await probeSandbox(spec);
    }
    if (problem) return this.refuse(problem);
    this.sandboxSpec = spec;
    this.current = { mode: 'bwrap', ready: true, version: binary.version };
    const range = settings.uidRange;
    this.logger.log(
      `Commands run in bubblewrap ${binary.version} sandboxes ${this.uids.perTenant && range ? `as a uid of each tenant's own (SANDBOX_UID_RANGE ${range.first}-${range.last})` : `as uid ${uid}`}`,
    );
    this.logger.log(
      this.memory.by === 'cgroup'
        ? `Each command's memory, its tmpfs pages included, is held by a cgroup of its own (under ${this.memory.detail})`
        : `Each command's memory is held by RLIMIT_AS and a watchdog on its processes and its tmpfs mounts (no cgroup: ${this.memory.detail})`,
    );
    const root = this.config.workspace.root;
    const blocked = root && runAs ? await firstUnsearchableAncestor(root) : undefined;
    if (blocked) {
      this.logger.warn(
        `${blocked} is not searchable by other users, so sandboxes (uid ${uid}) cannot reach the workspaces under WORKSPACE_ROOT ${root}: commands there will fail with sandbox_failed until it is (chmod o+x ${blocked})`,
      );
    }
  }

  state(): SandboxState {
    return this.current;
  }

  memoryEnforcement(): MemoryEnforcement {
    return this.memory;
  }

  // The confinement for one command of the tenant, as its own uid (see SandboxUids), or the 503 that says
  // why commands cannot run.
  async specFor(tenantId: string): Promise<SandboxSpec> {
    const spec = this.spec();
    if (spec.kind === 'none') {
      const runAs = this.uids.perTenant ? await this.uids.forTenant(tenantId) : undefined;
      return runAs ? { ...spec, runAs } : spec;
    }
    // The tenant's share of the CPU: its commands start in its cpu cgroup (see TenantCpuShares).
    const cpuGroup = this.cpuShares.commandGroup(tenantId);
    const runAs = this.uids.perTenant ? await this.uids.forTenant(tenantId) : undefined;
    return {
      ...spec,
      ...(cpuGroup && { cpuGroup }),
      ...(runAs && { runAs, etcFiles: sandboxEtcFiles(runAs.uid, runAs.gid, '/tmp') }),
    };
  }

  // The confinement as probed at start-up (as SANDBOX_UID), or the 503 that says why commands cannot run.
  spec(): SandboxSpec {
    if (this.sandboxSpec) return this.sandboxSpec;
    throw sandboxUnavailable(
      this.current.mode === 'bwrap' && !this.current.ready ? this.current.problem : { reason: 'unknown', fix: 'restart the service' },
    );
  }

  private refuse(problem: SandboxProblem): void {
    this.current = { mode: 'bwrap', ready: false, problem };
    this.logger.error(`Commands are refused: ${problem.reason}. To fix: ${problem.fix}. Everything else keeps working.`);
  }
}

// bubblewrap, started as the sandbox's uid, resolves the workspace path itself: every directory above it
// must let others pass (o+x). A directory that does not exist yet is created by the service later.
async function firstUnsearchableAncestor(target: string): Promise<string | undefined> {
  const chain: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    try {
      if (((await stat(dir)).mode & 0o001) === 0) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
