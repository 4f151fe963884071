import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AUTH_KIND, PROJECT_PARAM, TOOLSET_ROUTE } from '../../src/common/auth/auth.decorators.js';

// Which project a route serves is declared on it (@ProjectScoped), never read off a parameter's name by
// the guard. This holds the declarations to the routes' paths: every tenant route whose path has a
// :projectId declares it, and every declaration (and @ToolsetRoute's) names a parameter of its path.
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';

interface Route {
  name: string;
  path: string;
  kind: string;
  projectParam: string | undefined;
  toolsetParam: string | undefined;
}

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : controllerFiles(full);
    return entry.name.endsWith('.controller.ts') ? [full] : [];
  });
}

const paths = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : [typeof value === 'string' ? value : '']);
const joined = (...parts: string[]) =>
  `/${parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;

async function routes(): Promise<Route[]> {
  const found: Route[] = [];
  for (const file of controllerFiles('src')) {
    const module = (await import(pathToFileURL(path.resolve(file)).href)) as Record<string, unknown>;
    for (const exported of Object.values(module)) {
      if (typeof exported !== 'function' || !Reflect.hasMetadata(PATH_METADATA, exported)) continue;
      const controller = exported as { name: string; prototype: Record<string, unknown> };
      for (const key of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[key];
        if (typeof handler !== 'function' || !Reflect.hasMetadata(METHOD_METADATA, handler)) continue;
        const read = <T>(meta: string): T | undefined =>
          (Reflect.getMetadata(meta, handler) ?? Reflect.getMetadata(meta, controller)) as T | undefined;
        for (const base of paths(Reflect.getMetadata(PATH_METADATA, controller))) {
          for (const own of paths(Reflect.getMetadata(PATH_METADATA, handler))) {
            found.push({
              name: `${controller.name}.${key}`,
              path: joined(base, own),
              kind: read<string>(AUTH_KIND) ?? 'tenant',
              projectParam: read<string>(PROJECT_PARAM),
              toolsetParam: read<string>(TOOLSET_ROUTE),
            });
          }
        }
      }
    }
  }
  return found;
}

const paramsOf = (route: Route) => [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);

describe('the routes that serve one project', () => {
  let all: Route[];
  beforeAll(async () => {
    all = await routes();
  }, 120_000);

  it('are found', () => {
    expect(all.filter((route) => route.path.startsWith('/v1/projects/:projectId/tools')).length).toBeGreaterThanOrEqual(4);
  });

  it('declare their project with @ProjectScoped when they are tenant routes', () => {
    const undeclared = all.filter(
      (route) => route.kind === 'tenant' && paramsOf(route).includes('projectId') && route.projectParam !== 'projectId',
    );
    expect(undeclared.map((route) => `${route.name} ${route.path}`)).toEqual([]);
  });

  it('name a parameter of their own path in @ProjectScoped and @ToolsetRoute', () => {
    const wrong = all.filter(
      (route) =>
        (route.projectParam !== undefined && !paramsOf(route).includes(route.projectParam)) ||
        (route.toolsetParam !== undefined && !paramsOf(route).includes(route.toolsetParam)),
    );
    expect(wrong.map((route) => `${route.name} ${route.path}`)).toEqual([]);
  });
});
