// The PATH values commands are started with, so every command that needs the
// system's tools finds the same ones. Each is a fixed value, never the
// caller's PATH: a root process must not pick up a binary from a directory
// someone else can write.

/**
 * The distribution's own tools (setpriv, kill, systemctl, mkdir, env, git):
 * what the control plane runs as root or drops to a repo user with.
 */
export const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Root's provisioning tools (nft, squid, useradd, ip), which an operator may
 * have installed under /usr/local: what the host backend runs them with.
 */
export const ROOT_TOOLS_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * An ordinary user's PATH, for when none is given: what git, node and the
 * agents are looked up with, and a repo's default toolchain PATH.
 */
export const USER_PATH = '/usr/local/bin:/usr/bin:/bin';
