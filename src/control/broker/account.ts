// The broker's own system account: it owns the provider key files and runs
// every repo's broker after the drop (no login shell, no supplementary
// groups, no home). `provision host` creates it; dispatch looks it up by this
// name to start a broker as it; doctor reports it missing.

/** The system account the broker runs as and the provider key files belong to. */
export const BROKER_ACCOUNT = 'agent-runner-broker';
