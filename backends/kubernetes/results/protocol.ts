// What a push to the results endpoint may be, read from the request alone:
// which of git's smart-HTTP requests it is, and the ref updates at the head
// of a git-receive-pack body (pkt-lines up to the first flush, before the
// pack). A push is one creation of the attempt's own result ref; a delete,
// an update, a second ref, a push certificate or shallow lines are refused.
// Pure.

/** The smart-HTTP requests of a push; everything else (a fetch, a dumb-HTTP file) is not served. */
export type GitRequest =
  | { readonly kind: 'advertise' }
  | { readonly kind: 'receive' }
  | { readonly kind: 'refused'; readonly status: number; readonly message: string };

/** Pure: which request `method path?query` is, for the repository served at `base` (e.g. "/web.git"). */
export function classifyRequest(method: string, url: string, base: string): GitRequest {
  const [path = '', query = ''] = url.split('?', 2);
  const service = new URLSearchParams(query).get('service');
  if (path === `${base}/info/refs`) {
    if (method !== 'GET') return { kind: 'refused', status: 405, message: 'info/refs takes GET only' };
    if (service === 'git-receive-pack') return { kind: 'advertise' };
    return {
      kind: 'refused',
      status: 403,
      message: `this endpoint takes pushes only (service=git-receive-pack), not ${service ?? 'a dumb-HTTP fetch'}`,
    };
  }
  if (path === `${base}/git-receive-pack`) {
    if (method !== 'POST') return { kind: 'refused', status: 405, message: 'git-receive-pack takes POST only' };
    return { kind: 'receive' };
  }
  if (path === `${base}/git-upload-pack`)
    return { kind: 'refused', status: 403, message: 'this endpoint takes pushes only: nothing is fetched from it' };
  return { kind: 'refused', status: 404, message: `no repository here: push to ${base}` };
}

export interface PushCommand {
  readonly old: string;
  readonly new: string;
  readonly ref: string;
}

/** The most bytes the command section of a push may take before its pack. */
export const MAX_COMMAND_BYTES = 64 * 1024;

const OID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;
const ZERO = /^0+$/;

/**
 * Pure: the ref updates at the head of a git-receive-pack body: 'incomplete' while the flush has not arrived, the
 * commands once it has, or the problem with what came.
 */
export function readPushCommands(
  bytes: Buffer,
): 'incomplete' | { readonly commands: readonly PushCommand[] } | { readonly problem: string } {
  const commands: PushCommand[] = [];
  for (let at = 0; ;) {
    if (bytes.length < at + 4) return 'incomplete';
    const head = bytes.subarray(at, at + 4).toString('latin1');
    if (!/^[0-9a-f]{4}$/.test(head)) return { problem: 'the push does not start with git pkt-lines' };
    const length = parseInt(head, 16);
    if (length === 0) return commands.length ? { commands } : { problem: 'the push names no ref' };
    if (length < 5) return { problem: `a pkt-line of length ${length} is not a command` };
    if (bytes.length < at + length) return 'incomplete';
    const line = bytes
      .subarray(at + 4, at + length)
      .toString('utf8')
      .replace(/\n$/, '')
      .split('\0', 1)[0]!;
    const [old = '', next = '', ref = '', ...rest] = line.split(' ');
    if (line.startsWith('shallow ')) return { problem: 'a shallow push is not taken: push the whole history' };
    if (line.startsWith('push-cert')) return { problem: 'a signed push is not taken' };
    if (!OID.test(old) || !OID.test(next) || ref === '' || rest.length)
      return { problem: `"${line.slice(0, 120)}" is not a ref update` };
    commands.push({ old, new: next, ref });
    at += length;
  }
}

/** Pure: why these updates are not exactly the creation of `resultRef`, or undefined when they are. */
export function pushProblem(commands: readonly PushCommand[], resultRef: string): string | undefined {
  if (commands.length !== 1)
    return `a push creates one ref, ${resultRef}; this one names ${commands.length}: ${commands.map((c) => c.ref).join(', ')}`;
  const [command] = commands as [PushCommand];
  if (command.ref !== resultRef) return `this token may create ${resultRef} only, not ${command.ref}`;
  if (ZERO.test(command.new)) return `${resultRef} may not be deleted`;
  if (!ZERO.test(command.old)) return `${resultRef} exists already: a result is pushed once`;
  return undefined;
}
