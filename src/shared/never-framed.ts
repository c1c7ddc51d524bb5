/**
 * The headers that keep an HTML answer out of every frame, so that no other page can lay it under
 * its own and have its buttons clicked (Swagger UI's "Try it out" on /docs, the dashboard's): the
 * page's Content-Security-Policy with `frame-ancestors 'none'`, and X-Frame-Options for browsers
 * that read only that.
 */
export function neverFramedHeaders(policy?: string): Record<string, string> {
  const frameAncestors = "frame-ancestors 'none'";
  return {
    'content-security-policy': policy ? `${policy}; ${frameAncestors}` : frameAncestors,
    'x-frame-options': 'DENY',
  };
}
