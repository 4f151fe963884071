import { PAGE_SECURITY_HEADERS } from './console-static.js';

// The interactive API docs (Swagger UI at /docs, its assets under /docs/, the document at /openapi.json)
// get the console's protections: no framing, no sniffing, no referrer, and a CSP that loads only this
// origin's scripts. Swagger UI's page carries two inline <style> blocks and its components set inline
// styles, so styles (only) may be inline; "Try it out" calls this origin.
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DOCS_CSP,
  ...PAGE_SECURITY_HEADERS,
};

// Asked of every request: most paths fail the first test, without the path being copied out of the URL.
export const isDocsPath = (url: string | undefined): boolean => {
  if (url === undefined || !(url.startsWith('/docs') || url.startsWith('/openapi.json'))) return false;
  const pathname = url.split('?')[0];
  return pathname === '/docs' || pathname.startsWith('/docs/') || pathname === '/openapi.json';
};
