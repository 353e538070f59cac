// The session's role as every adapter reads it: one rule, so claude, codex and
// a command agent never disagree on whether a session is a reviewer.
import type { AgentInvocation, ReviewRole } from '../../types.js';

/** The role asked for; without one a session with review files reviews, any other implements. */
export function roleOf(invocation: AgentInvocation): ReviewRole {
  return invocation.role ?? (invocation.review ? 'review' : 'implement');
}

/** The review files, only for a reviewer: an implementer or fixer never gets the verdict channel. */
export function reviewFilesOf(invocation: AgentInvocation): AgentInvocation['review'] {
  return roleOf(invocation) === 'review' ? invocation.review : undefined;
}

/** AGENT_ROLE, which every agent gets: a wrapper or the scripted agent acts on it. */
export function roleEnvironment(invocation: AgentInvocation): Record<string, string> {
  return { AGENT_ROLE: roleOf(invocation) };
}
