/**
 * What a sandboxed command may touch (SBX-1): the policy is plain data, built by the composer
 * (the engine knows the workspace and Home; this package knows the operating system's own
 * credential places).
 */
import { join } from 'node:path';

export interface SandboxPolicy {
  /** Directories the command may write, bound read-write at their own paths (the workspace). */
  readonly writable: readonly string[];
  /** Directories or files readable although they sit under the private temp (an exec tool's set folder). */
  readonly readable?: readonly string[];
  /** Paths inside a writable directory that stay read-only (`.git/hooks`, `.git/config`); missing ones are skipped. */
  readonly readOnly?: readonly string[];
  /** Paths made unreadable: a folder is replaced by an empty read-only one, a file cannot be opened. */
  readonly hidden: readonly string[];
  /** false: no network at all (an own network namespace with only loopback); true: the host's network. */
  readonly network: boolean;
  /**
   * With `network: false`, reach the outside only through this filtering proxy (`startNetworkProxy`):
   * `socat` bridges 127.0.0.1:3128 to its Unix socket (the session's bridge when `join` is given,
   * else one started inside the command) and `HTTP(S)_PROXY` points there.
   */
  readonly proxy?: {
    readonly socket: string;
    readonly socat: string;
    /**
     * The session's long-lived bridge (`startProxyBridge().join()`): the command joins its network
     * namespace, where 127.0.0.1:3128 already listens, instead of starting socat of its own.
     */
    readonly join?: readonly string[];
  };
}

/**
 * Credential places of the user account and the host that no sandboxed command needs to read:
 * keys, cloud and registry tokens, password stores, and the sockets that hand out a root shell
 * (Docker, containerd, podman, systemd, the system bus) or a user session (`/run/user`).
 */
export function credentialPaths(userHome: string): string[] {
  const inHome = [
    '.ssh',
    '.gnupg',
    '.aws',
    '.azure',
    '.kube',
    '.config/gcloud',
    '.config/gh',
    '.config/hub',
    '.docker/config.json',
    '.netrc',
    '.npmrc',
    '.yarnrc',
    '.pypirc',
    '.git-credentials',
    '.cargo/credentials',
    '.cargo/credentials.toml',
    '.gem/credentials',
    '.password-store',
    '.local/share/keyrings',
    '.terraform.d/credentials.tfrc.json',
  ].map((name) => join(userHome, name));
  // Sockets on a read-only mount still accept connections: hide the ones that hand out root or a session.
  const sockets = [
    '/run/user',
    '/var/run/docker.sock',
    '/run/docker.sock',
    '/run/containerd/containerd.sock',
    '/run/podman/podman.sock',
    '/run/dbus/system_bus_socket',
    '/var/run/dbus/system_bus_socket',
    '/run/systemd/private',
  ];
  return [...inHome, ...sockets];
}

/** Files and folders of a workspace that stay read-only inside the sandbox: code that runs on the next `git` or start. */
export function protectedWorkspacePaths(workspace: string): string[] {
  return ['.git/hooks', '.git/config', '.crystal', '.claude', '.mcp.json', '.vscode'].map((name) => join(workspace, name));
}

/** Start-up files of the user account: read-only when the workspace contains them (crystal started in ~). */
export function userStartupPaths(userHome: string): string[] {
  return [
    '.bashrc',
    '.bash_profile',
    '.bash_login',
    '.profile',
    '.zshrc',
    '.zprofile',
    '.zshenv',
    '.config/fish',
    '.config/autostart',
    '.config/systemd',
    '.gitconfig',
    '.config/git',
  ].map((name) => join(userHome, name));
}
