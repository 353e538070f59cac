// The results repository's own guard: a pre-receive hook that git runs on
// every push, whoever serves it. The endpoint checks each push before git
// sees it; this makes git itself refuse anything but the creation of the one
// ref the endpoint names in AGENT_RUNNER_RESULT_REF (no variable: nothing is
// taken), so a check missed in the server is still a refusal. POSIX sh, no
// value of the push ever evaluated. Pure text.

export const PRE_RECEIVE_HOOK = `#!/bin/sh
# Installed by agent-runner (backends/kubernetes/results/hook.ts); rewritten when the endpoint starts.
if [ -z "$AGENT_RUNNER_RESULT_REF" ]; then
  echo "agent-runner: refused: no result ref was named for this push (push through agent-runner results serve)"
  exit 1
fi
count=0
while read -r old new ref; do
  count=$((count + 1))
  if [ "$count" -gt 1 ]; then
    echo "agent-runner: refused: a push creates one ref, $AGENT_RUNNER_RESULT_REF"
    exit 1
  fi
  if [ "$ref" != "$AGENT_RUNNER_RESULT_REF" ]; then
    echo "agent-runner: refused: this push may create $AGENT_RUNNER_RESULT_REF only, not $ref"
    exit 1
  fi
  case "$new" in *[!0]*) ;; *)
    echo "agent-runner: refused: $ref may not be deleted"
    exit 1 ;;
  esac
  case "$old" in *[!0]*)
    echo "agent-runner: refused: $ref exists already: a result is pushed once"
    exit 1 ;;
  esac
done
if [ "$count" -ne 1 ]; then
  echo "agent-runner: refused: the push named no ref"
  exit 1
fi
exit 0
`;
