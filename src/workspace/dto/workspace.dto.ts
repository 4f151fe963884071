import { ApiProperty } from '@nestjs/swagger';

export type WorkspaceSourceDto = 'database' | 'workspace_root' | 'cwd';
const SOURCE = {
  enum: ['database', 'workspace_root', 'cwd'],
  description: "Where it came from: the project's workspacePath, WORKSPACE_ROOT/<projectId>, or the working directory",
};

// What a tenant is told: never a host path it was not given. A project placed inside one of the tenant's
// granted roots shows its path relative to that root; any other workspace shows none.
export class WorkspaceResponseDto {
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'site',
    description:
      "The workspace's path relative to the tenant's granted root that holds it (see workspaceRoot); null when the operator placed it or it is the project's own directory",
  })
  path!: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The granted root (as the operator gave it to this tenant) that holds the workspace, or null',
  })
  workspaceRoot!: string | null;

  @ApiProperty(SOURCE)
  source!: WorkspaceSourceDto;
}

// What the operator is told: the absolute path on the host.
export class AdminWorkspaceResponseDto {
  @ApiProperty({ example: '/srv/toolgate/workspaces/0b6c…', description: 'Real path of the workspace directory on the host' })
  path!: string;

  @ApiProperty(SOURCE)
  source!: WorkspaceSourceDto;
}
