/**
 * `@crystal/sandbox`: wraps a command in the OS sandbox (SBX-1..2). One seam: `detectSandbox()`
 * says whether this machine can sandbox (and why not), `wrapCommand()` turns an argv into the
 * bubblewrap argv to spawn under a `SandboxPolicy`, `explainRefusal()` names what the sandbox
 * blocked in a failed command's output. It never imports the engine; the engine composes it for
 * bash, exec tools and (later) hooks and local MCP servers.
 *
 * Why bubblewrap directly rather than `@anthropic-ai/sandbox-runtime` (checked 0.0.83, the latest,
 * 2026-12): that runtime declares `engines: node >=22.12.0` and we support Node 20; it pulls zod 3
 * (we ship zod 4), commander and node-forge (a TLS proxy), and filters the network through its own
 * HTTP/SOCKS proxy even when no host is allowed. What we need on Linux is one bwrap argv per
 * call: read-only root, writable workspace, private /tmp, hidden credential paths, no network
 * namespace, no capabilities. That is ~100 lines, costs a few milliseconds per call, works offline,
 * and leaves the spawning (process groups, timeouts, kill) with the engine's supervisor. macOS:
 * `seatbeltProfile()` writes the same policy as a Seatbelt profile for `sandbox-exec`, checked
 * by its rules on Linux; it is not wired in yet (no Mac to run it on), so on macOS
 * `detectSandbox()` still reports unavailable and the asks stay.
 */
export { type ProxyBridge, type ProxyBridgeOptions, startProxyBridge } from './bridge.js';
export { type DetectOptions, detectSandbox, findSandbox, probeSandbox, type SandboxAvailability } from './detect.js';
export { credentialPaths, protectedWorkspacePaths, type SandboxPolicy, userStartupPaths } from './policy.js';
export { type NetworkProxy, type NetworkProxyOptions, PROXY_PORT, type ProxyConnection, startNetworkProxy } from './proxy.js';
export { explainRefusal, type RefusalHints } from './refusal.js';
export { type SeatbeltCommand, type SeatbeltOptions, sbplString, seatbeltProfile, wrapSeatbelt } from './seatbelt.js';
export { type WrappedCommand, type WrapRequest, wrapCommand } from './wrap.js';
