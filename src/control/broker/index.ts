export {
  brokerServeCommand,
  brokerUrl,
  startRunBroker,
  type RunBroker,
  type StartRunBrokerInput,
} from './run-broker.js';
export { startWithCapability, SESSION_GRANT_TTL_SEC, type GrantedSession } from './session-grant.js';
export { BROKER_ACCOUNT } from './account.js';
export { brokerServeConfig, startBrokerForRun, type RunBrokerHandle, type StartBrokerForRunInput } from './for-run.js';
