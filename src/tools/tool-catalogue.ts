import type { ToolDefinition } from '../execution/tool-definition.js';
import type { CompiledToolValidator } from '../execution/validation/tool-validator.js';
import type { ToolRenames } from './exposed-texts.js';
import type { RegisteredTool } from './tool-registry.js';

// A tool as a catalogue shows it to the model: another name, description or schema over a real tool.
export interface ExposedTool {
  // What the model calls it by.
  readonly name: string;
  // The real tool that runs: its classes decide approval, its name is audited, its validator has the last word.
  readonly tool: RegisteredTool;
  // The model's arguments are checked against the exposed schema first, so a refusal names what it saw.
  readonly validator: CompiledToolValidator;
  // Added to the model's arguments before the real tool's validation (the model never sees them).
  readonly fixedArguments: Readonly<Record<string, unknown>> | null;
  // A directory of the workspace, relative and normalized, that the tool's paths are resolved in.
  readonly pathPrefix: string | null;
}

// One catalogue over one tool list: what the model is shown and how a name it calls resolves.
export interface ToolView {
  readonly definitions: readonly ToolDefinition[];
  // The real tools the model knows by another name (real -> shown), for the texts a run answers it: a
  // tool shown under its own name too, or under two names, is left as it is.
  readonly renames: ToolRenames;
  // The exposed tool of that name, or an AppError (tool_not_found with suggestions).
  find(name: string): ExposedTool;
  // A call of a dispatching tool (search mode's call_tool): the tool it names and its arguments, or null
  // for an ordinary tool. Throws the refusal of a malformed call (invalid_arguments of the dispatcher).
  dispatch(name: string, args: unknown): { name: string; arguments: unknown } | null;
}

// Another view of a project's tools than the project's own (a toolset): handed to the call path and the MCP
// endpoint with a call, so that they serve it without knowing what made it.
export interface ToolCatalogue {
  // Audited with every call made through it.
  readonly toolset: string;
  view(tools: readonly RegisteredTool[]): ToolView;
}
