import type { ApiParamOptions } from '@nestjs/swagger';

// Path parameters as the document declares them. Ids are uuids; one that is not answers 404 like a missing one.
export const PROJECT_ID: ApiParamOptions = { name: 'projectId', format: 'uuid', description: 'The project' };
export const INVOCATION_ID: ApiParamOptions = { name: 'invocationId', format: 'uuid', description: 'The invocation (audit row) id' };
export const SKILL_ID: ApiParamOptions = { name: 'skillId', format: 'uuid' };
export const TENANT_ID: ApiParamOptions = { name: 'tenantId', format: 'uuid' };
export const API_KEY_ID: ApiParamOptions = { name: 'keyId', format: 'uuid' };
export const TOOL_NAME: ApiParamOptions = {
  name: 'toolName',
  example: 'read_file',
  description: 'A built-in tool or one of the project’s skill tools',
};
export const TOOLSET_SLUG: ApiParamOptions = {
  name: 'slug',
  example: 'docs-reader',
  description: 'The toolset, by its slug in the project',
};
export const EXPOSED_TOOL_NAME: ApiParamOptions = {
  name: 'toolName',
  example: 'read_doc',
  description: 'A tool as the toolset names it (in search mode also search_tools and call_tool)',
};
