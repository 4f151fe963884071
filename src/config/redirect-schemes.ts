// Redirect URI schemes no OAuth client may register and no operator may list (OAUTH_APP_SCHEMES): they run
// script, reach the network in the clear, open browser-internal pages, or hand the browser to an operating
// system's handlers (Windows' ms-*, search-ms:, shell:; macOS's x-apple.*), which act on what they are given.
const NEVER = new Set([
  'http',
  'javascript',
  'data',
  'file',
  'vbscript',
  'about',
  'blob',
  'ws',
  'wss',
  'ftp',
  'tftp',
  'mailto',
  'tel',
  'sms',
  'shell',
  'its',
  'mk',
  'hcp',
  'help',
  'intent',
  'android-app',
  'ios-app',
  'view-source',
  'smb',
  'afp',
  'nfs',
  'ssh',
  'telnet',
  'chrome',
  'chrome-extension',
  'edge',
  'opera',
  'moz-extension',
  'resource',
]);
const NEVER_PREFIXES = ['ms-', 'search-ms', 'microsoft-', 'x-apple', 'itms', 'x-help'];

export function isRefusedAppScheme(scheme: string): boolean {
  const name = scheme.toLowerCase();
  return NEVER.has(name) || NEVER_PREFIXES.some((prefix) => name.startsWith(prefix));
}
