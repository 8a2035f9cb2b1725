/**
 * The configuration HAProxy starts with before the controller delivers one: no listener, so
 * HAProxy's readiness probe fails until a real configuration binds its ports. Written only
 * when the base directory has no haproxy.cfg (a new Pod); never recorded as applied.
 */
export const bootstrapConfig = `# Written by haptic agent at start-up: HAProxy runs with this until the controller
# applies a configuration. It serves nothing.
global
  log stderr format raw local0

defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
`;
