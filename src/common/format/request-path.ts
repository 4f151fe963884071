// The path of a request's URL as both routers read it: it ends at '?' or at a literal '#' (which no browser
// sends, but a raw client can). What decides on a path (CORS) and what reports it (the access log, the
// request span) read it the same way, so none of them sees a path the router did not route.
export function requestPath(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}
