import { ApiProperty } from '@nestjs/swagger';

export class WorkspaceResponseDto {
  @ApiProperty({ example: '/srv/toolgate/workspaces/0b6c…', description: 'Real path of the workspace directory' })
  path!: string;

  @ApiProperty({
    enum: ['database', 'workspace_root', 'cwd'],
    description: "Where it came from: the project's workspacePath, WORKSPACE_ROOT/<projectId>, or the working directory",
  })
  source!: 'database' | 'workspace_root' | 'cwd';
}
