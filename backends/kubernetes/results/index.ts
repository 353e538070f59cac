// The result's way back from a pod: the runner's results repository, the
// push tokens, the endpoint pods push to (its socket is src/io/results/),
// and taking a pushed result through the hand-off's checks.
export { resultsRepository, pushTokensDir, ensureResultsRepository, DEFAULT_RESULT_MAX_BYTES } from './repository.js';
export { issuePushToken, revokePushToken, attemptOfToken, type ResultAttempt } from './tokens.js';
export {
  serveResults,
  resultsHandler,
  resultsPath,
  backendCommand,
  type ResultsAdmission,
  type ResultsHandler,
  type ResultsListen,
  type ResultsListener,
  type ResultsOptions,
  type ResultsRequestHead,
} from './endpoint.js';
export { classifyRequest, readPushCommands, pushProblem, MAX_COMMAND_BYTES, type PushCommand } from './protocol.js';
export { PRE_RECEIVE_HOOK } from './hook.js';
export { takeResult, type TakeResultDeps, type TakenAttempt } from './take.js';
